/**
 * The commit pipeline writes a whole batch in one statement whose updates are guarded (an action
 * still in the state it was read in, a chain head still where its agent left it). The statement
 * ends by asking this function whether every guard held; when one did not, it raises a
 * serialization failure (SQLSTATE 40001), so nothing of the statement is kept and the caller
 * knows to read again and retry.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql.unsafe(`
    CREATE FUNCTION commit_guard(held boolean) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      IF held IS NOT TRUE THEN
        RAISE EXCEPTION 'commit guard: the state changed since it was read' USING ERRCODE = '40001';
      END IF;
      RETURN true;
    END
    $$`)
})
