-- Keys with scopes: a key may be limited to some of the scopes of db/key-scopes.ts (`tables:read`,
-- `workflows:execute`, …); each route of the public API needs one. Empty: the key's full reach, as
-- every key had before (and keeps). The list is validated where keys are created (the admin plane),
-- not here, so a new scope needs no migration.
alter table api_keys add column scopes text[] not null default '{}';
