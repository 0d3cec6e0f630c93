-- Every API process keeps credentials in memory and listens on `credential_changed`
-- (src/auth/credential-cache.ts). A revocation, or any change to what authentication reads, is
-- announced with the credential's client_id when its transaction commits. `last_used_at` is not
-- announced: token exchanges write it, and it plays no part in authentication.
CREATE FUNCTION notify_credential_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('credential_changed', OLD.client_id);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER credential_changed
AFTER UPDATE OF revoked_at, partner_id, environment, client_id OR DELETE ON credentials
FOR EACH ROW EXECUTE FUNCTION notify_credential_changed();
