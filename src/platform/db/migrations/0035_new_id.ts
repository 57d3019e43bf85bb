/**
 * `new_id(prefix)`: the ids of `newId` in src/platform/ids.ts (`prefix_` + 24 base36
 * characters) made by PostgreSQL, for rows a single statement creates in numbers it only learns
 * while it runs (the webhook dispatcher: a delivery per event and subscribed webhook). The bytes
 * come from two `gen_random_uuid()`s, leaving out the four that carry version and variant bits.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql.unsafe(`
    CREATE FUNCTION new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
      SELECT prefix || '_' || string_agg(substr('0123456789abcdefghijklmnopqrstuvwxyz', 1 + get_byte(r.bytes, i) % 36, 1), '' ORDER BY i)
      FROM (SELECT uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) AS bytes) r,
        unnest(ARRAY[0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 25, 26, 27]) i
    $$`)
})
