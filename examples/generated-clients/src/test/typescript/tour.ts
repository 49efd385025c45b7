// The tour through the client typescript-fetch generated from the service's OpenAPI document:
// create a payment, retry it (the answer replayed), reuse its key for another amount (a typed
// problem), read it back. Run by GeneratedClientsIT with node; prints what it saw as one JSON
// object, which the test checks.
import {
  Configuration,
  ErrorCode,
  PaymentResponseStatusEnum,
  PaymentsApi,
  ProblemFromJSON,
  ResponseError,
} from './client';

async function tour(): Promise<Record<string, unknown>> {
  const seen: Record<string, unknown> = {};
  const payments = new PaymentsApi(
    new Configuration({ basePath: env('BASE_URI'), accessToken: env('API_KEY') }),
  );
  const idempotencyKey = env('IDEMPOTENCY_KEY');
  const command = {
    accountId: 'acc_1',
    amount: '10.00',
    currency: 'EUR',
    merchantReference: env('MERCHANT_REFERENCE'),
  };

  const created = await payments.createPaymentRaw({ idempotencyKey, createPaymentRequest: command });
  const payment = await created.value();
  seen['created.status'] = created.raw.status;
  seen['created.paymentId'] = payment.paymentId;
  seen['created.replayed'] = created.raw.headers.get('Idempotent-Replayed');

  // The same request again, as after a lost answer: the first answer, marked as a replay.
  const replay = await payments.createPaymentRaw({ idempotencyKey, createPaymentRequest: command });
  seen['replay.status'] = replay.raw.status;
  seen['replay.paymentId'] = (await replay.value()).paymentId;
  seen['replay.replayed'] = replay.raw.headers.get('Idempotent-Replayed');

  // The same key for another amount: refused with a problem whose errorCode is the enum.
  try {
    await payments.createPayment({ idempotencyKey, createPaymentRequest: { ...command, amount: '99.00' } });
    seen['mismatch.status'] = 'accepted';
  } catch (e) {
    if (!(e instanceof ResponseError)) {
      throw e;
    }
    const problem = ProblemFromJSON(await e.response.json());
    seen['mismatch.status'] = e.response.status;
    seen['mismatch.isKeyReused'] =
      problem.errorCode === ErrorCode.IdempotencyKeyReusedWithDifferentRequest;
  }

  const fetched = await payments.getPayment({ paymentId: payment.paymentId });
  seen['get.paymentId'] = fetched.paymentId;
  seen['get.isCompleted'] = fetched.status === PaymentResponseStatusEnum.Completed;
  return seen;
}

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined) {
    throw new Error(`${name} is not set`);
  }
  return value;
}

tour().then(
  (seen) => console.log(JSON.stringify(seen)),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
