package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.web.OperatorPrincipal;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.request.MockMvcRequestBuilders;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

/**
 * The events admin endpoints are for operators only, like the idempotency ones: refused to a
 * tenant's key by the gate, and by the controller itself when the gate is not there. Each refusal
 * leaves the parked event, message and delivery as they were.
 */
class EventsAdminOperatorsOnlyIT extends HttpTestSupport {

  @Autowired WebApplicationContext context;

  private String eventId;
  private String messageId;
  private String deliveryKey;

  /** One parked event, one parked message (shipping) and one parked delivery. */
  @BeforeEach
  void parkOneOfEach() {
    eventId = UUID.randomUUID().toString();
    messageId = UUID.randomUUID().toString();
    deliveryKey = "test_delivery_" + UUID.randomUUID();
    jdbc.sql(
            """
            insert into idemkit_outbox (event_id, event_type, tenant, aggregate_type, aggregate_id,
                sequence, occurred_at, payload, attempts, next_attempt_at, last_error, parked_at)
            values (?::uuid, 'TestEvent', 'tenant_demo_a', 'test', ?, 1, now(), '{}', 5, now(),
                'broker down', now())
            """)
        .params(eventId, eventId)
        .update();
    jdbc.sql(
            """
            insert into idemkit_inbox (consumer_name, message_id, status, attempts, received_at,
                last_error, event_type, tenant, aggregate_type, aggregate_id, sequence,
                occurred_at, payload)
            values ('shipping', ?::uuid, 'PARKED', 5, now(), 'carrier down', 'OrderPaid',
                'tenant_demo_a', 'order', ?, 1, now(), '{}')
            """)
        .params(messageId, messageId)
        .update();
    jdbc.sql(
            """
            insert into idemkit_delivery (delivery_key, channel, payload, status, attempts,
                created_at, next_attempt_at, last_error)
            values (?, 'test', '{}', 'PARKED', 5, now(), now(), 'mail down')
            """)
        .param(deliveryKey)
        .update();
  }

  @AfterEach
  void forgetThem() {
    jdbc.sql("delete from idemkit_outbox where event_id = ?::uuid").param(eventId).update();
    jdbc.sql("delete from idemkit_inbox where message_id = ?::uuid").param(messageId).update();
    jdbc.sql("delete from idemkit_delivery where delivery_key = ?").param(deliveryKey).update();
  }

  /** Every events admin endpoint: method and path. */
  private List<String[]> endpoints() {
    return List.of(
        new String[] {"GET", "/v1/admin/events/outbox"},
        new String[] {"GET", "/v1/admin/events/outbox/parked"},
        new String[] {"POST", "/v1/admin/events/outbox/parked/" + eventId + "/requeue"},
        new String[] {"GET", "/v1/admin/events/inbox/parked"},
        new String[] {"GET", "/v1/admin/events/inbox/held"},
        new String[] {"POST", "/v1/admin/events/inbox/shipping/parked/" + messageId + "/requeue"},
        new String[] {"GET", "/v1/admin/events/deliveries/parked"},
        new String[] {"POST", "/v1/admin/events/deliveries/parked/" + deliveryKey + "/requeue"});
  }

  /** The three parked rows, as one text: any change shows. */
  private String parkedRows() {
    return jdbc.sql(
            """
            select (select attempts || '/' || coalesce(parked_at::text, 'not parked')
                      || '/' || next_attempt_at::text
                    from idemkit_outbox where event_id = ?::uuid)
                || ' ' || (select status || '/' || attempts from idemkit_inbox
                    where consumer_name = 'shipping' and message_id = ?::uuid)
                || ' ' || (select status || '/' || attempts || '/' || next_attempt_at::text
                    from idemkit_delivery where delivery_key = ?)
            """)
        .params(eventId, messageId, deliveryKey)
        .query(String.class)
        .single();
  }

  @Test
  void aTenantsKeyIsRefusedAtEveryEndpointAndChangesNothing() {
    String before = parkedRows();
    assertThat(before).startsWith("5/").contains(" PARKED/5 ", " PARKED/5/");

    for (String[] endpoint : endpoints()) {
      HttpResponse<String> r =
          "GET".equals(endpoint[0])
              ? get(endpoint[1], TENANT_A)
              : post(endpoint[1], TENANT_A, null, "{}");
      assertThat(r.statusCode()).as(endpoint[1] + " " + r.body()).isEqualTo(403);
      assertThat(r.body()).contains("\"errorCode\":\"FORBIDDEN\"");
    }

    assertThat(parkedRows()).isEqualTo(before);
  }

  /**
   * Defence in depth: the dispatcher driven with no filter at all, as if the gate had let the
   * request through. The controller refuses a tenant and an anonymous caller by itself, and still
   * serves an operator, who sees the rows the others were refused.
   */
  @Test
  void withoutTheGateTheControllerStillRefusesTenantsAndAnonymousCallers() throws Exception {
    MockMvc noGate = MockMvcBuilders.webAppContextSetup(context).build();
    Principal tenant = () -> "tenant_demo_a";
    String before = parkedRows();

    for (String[] endpoint : endpoints()) {
      MockHttpServletResponse asTenant =
          noGate.perform(request(endpoint).principal(tenant)).andReturn().getResponse();
      MockHttpServletResponse anonymous =
          noGate.perform(request(endpoint)).andReturn().getResponse();

      assertThat(asTenant.getStatus()).as(endpoint[1]).isEqualTo(403);
      assertThat(asTenant.getContentAsString())
          .contains("FORBIDDEN")
          .doesNotContain(eventId, messageId, deliveryKey);
      assertThat(anonymous.getStatus()).as(endpoint[1]).isEqualTo(403);
    }
    assertThat(parkedRows()).isEqualTo(before);

    Principal operator = new OperatorPrincipal("demo_operator");
    for (String[] endpoint : endpoints()) {
      if ("GET".equals(endpoint[0])) {
        MockHttpServletResponse asOperator =
            noGate.perform(request(endpoint).principal(operator)).andReturn().getResponse();
        assertThat(asOperator.getStatus()).as(endpoint[1]).isEqualTo(200);
      }
    }
    String parked =
        noGate
            .perform(
                MockMvcRequestBuilders.get("/v1/admin/events/inbox/parked").principal(operator))
            .andReturn()
            .getResponse()
            .getContentAsString();
    assertThat(parked).contains(messageId);
    String deliveries =
        noGate
            .perform(
                MockMvcRequestBuilders.get("/v1/admin/events/deliveries/parked")
                    .principal(operator))
            .andReturn()
            .getResponse()
            .getContentAsString();
    assertThat(deliveries).contains(deliveryKey);
    assertThat(parkedRows()).isEqualTo(before);
  }

  private static MockHttpServletRequestBuilder request(String[] endpoint) {
    return "GET".equals(endpoint[0])
        ? MockMvcRequestBuilders.get(endpoint[1])
        : MockMvcRequestBuilders.post(endpoint[1]);
  }
}
