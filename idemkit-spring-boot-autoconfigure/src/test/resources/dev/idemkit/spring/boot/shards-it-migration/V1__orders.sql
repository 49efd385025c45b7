create table orders (
    id       uuid primary key,
    tenant   text not null,
    idem_key text not null,
    amount   integer not null
);
