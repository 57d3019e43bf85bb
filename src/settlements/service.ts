/**
 * Settlements: seal an organization's unsettled receipts into its Merkle log
 * and sign the new tree head; answer inclusion and consistency proofs.
 *
 * A settlement is one transaction holding the log head's row lock, so two at
 * once queue and never settle a receipt twice. Leaves are read back in pages
 * and folded into tiles; memory stays at a page plus one tile per level.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { listPage } from "../../protocol/common.js"
import type { Settlement } from "../../protocol/settlements.js"
import { checkpointBody, signatureLine, verifierKey } from "../../protocol/verifier/checkpoint.js"
import { settlementRecord } from "../../protocol/verifier/settlement.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newUuid } from "../platform/ids.js"
import { isoRequired } from "../platform/sql.js"
import { leafHash } from "../receipts/merkle.js"
import { Receipts } from "../receipts/service.js"
import { canonicalJsonBytes, sha256Tagged } from "../receipts/signing.js"
import { ReceiptNotSettled, refuse, SettlementNotFound } from "./errors.js"
import {
  consistencyFromTiles,
  edgeTiles,
  inclusionFromTiles,
  LogAppender,
  rootFromTiles,
  TILE_WIDTH,
  type TileKey,
  type Tiles,
  tileName,
  tilesForConsistency,
  tilesForInclusion,
  tilesForRoot
} from "./log.js"
import * as store from "./store.js"

/** Full tiles kept in memory for proofs (8 KB each: 4 MB). */
const TILES_CACHED = 512
const FULL_TILE_BYTES = TILE_WIDTH * 32

/** Leaves read back per query while sealing (about 100 bytes each in flight). */
const LEAF_PAGE = 32_768

const tagged = (hash: Uint8Array): string => `sha256:${Buffer.from(hash).toString("hex")}`

const asSettlement = (row: store.SettlementRow): Settlement => ({
  id: row.settlement_uuid,
  org_uuid: row.org_uuid,
  period_start: row.period_start,
  period_end: row.period_end,
  receipt_count: row.receipt_count,
  merkle_root: row.merkle_root,
  settlement_hash: row.settlement_hash,
  signature: row.signature,
  signing_key_id: row.signing_key_id,
  timestamp_token: row.timestamp_token,
  sealed_at: row.sealed_at
})

export const makeSettlements = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const receipts = yield* Receipts
  const config = yield* Config
  const host = new URL(config.baseUrl).host
  /** The signed-note key name of the platform's receipt key, and each organization's log origin. */
  const keyName = host
  const originOf = (org: string) => `${host}/settlements/${org}`

  /**
   * Full tiles never change once written, so proofs keep the most recently used ones in memory
   * (about 8 KB each); a log's edge tiles, which still grow, are always read.
   */
  const fullTiles = new Map<string, Uint8Array>()
  const readTiles = (org: string, keys: ReadonlyArray<TileKey>) =>
    Effect.gen(function* () {
      const found = new Map<string, Uint8Array>()
      const missing: TileKey[] = []
      for (const key of keys) {
        const name = tileName(key.level, key.index)
        const cached = fullTiles.get(`${org}/${name}`)
        if (cached === undefined) {
          missing.push(key)
          continue
        }
        fullTiles.delete(`${org}/${name}`)
        fullTiles.set(`${org}/${name}`, cached)
        found.set(name, cached)
      }
      for (const [name, tile] of yield* store.readTiles(org, missing)) {
        found.set(name, tile)
        if (tile.length !== FULL_TILE_BYTES) continue
        fullTiles.set(`${org}/${name}`, tile)
        if (fullTiles.size > TILES_CACHED) fullTiles.delete(fullTiles.keys().next().value!)
      }
      return found as Tiles
    })

  const inTransaction = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    sql.withTransaction(effect).pipe(Effect.provideService(SqlClient.SqlClient, sql))

  const found = (org: string, settlementUuid: string) =>
    Effect.flatMap(Effect.orDie(store.settlementById(org, settlementUuid).pipe(Effect.provideService(SqlClient.SqlClient, sql))), (row) =>
      row === undefined ? refuse(new SettlementNotFound({ settlement_uuid: settlementUuid })) : Effect.succeed(row)
    )

  /** Folds leaves [base, size) into the tiles and answers the new root. */
  const extendTree = (org: string, base: number, size: number) =>
    Effect.gen(function* () {
      const appender = new LogAppender(base, yield* store.readTiles(org, edgeTiles(base)))
      for (let from = base; from < size; from += LEAF_PAGE) {
        const to = Math.min(size, from + LEAF_PAGE)
        const digests = yield* store.leafDigests(org, from, to)
        if (digests.length !== to - from) return yield* Effect.die(new Error(`settlement log of ${org}: leaves ${from}..${to} incomplete`))
        for (const digest of digests) appender.append(leafHash(digest))
        yield* store.writeTiles(org, appender.takeWritten())
      }
      yield* store.writeTiles(org, appender.partialTiles())
      return rootFromTiles(yield* store.readTiles(org, tilesForRoot(size)), size)
    })

  const seal = (org: string) =>
    Effect.gen(function* () {
      const base = yield* store.lockLog(org)
      const batch = yield* store.appendUnsettled(org, base)
      if (batch.appended === 0) return null
      const size = base + batch.appended
      const root = yield* extendTree(org, base, size)
      const signer = yield* receipts.platformSigner
      const sealedAt = new Date().toISOString()
      const record = settlementRecord({
        id: newUuid(),
        org_uuid: org,
        period_start: isoRequired(batch.periodStart),
        period_end: isoRequired(batch.periodEnd),
        receipt_count: batch.appended,
        merkle_root: tagged(root),
        signing_key_id: signer.publicKeyId,
        // The token's message imprint is the root itself (a SHA-256 value), as a receipt's is its payload hash.
        timestamp_token: yield* receipts.timestampDigest(root),
        sealed_at: sealedAt
      })
      const bytes = canonicalJsonBytes(record)
      const body = checkpointBody(originOf(org), size, root)
      const row: store.SettlementRow = {
        settlement_uuid: record.id as string,
        org_uuid: org,
        previous_size: base,
        tree_size: size,
        receipt_count: batch.appended,
        period_start: record.period_start as string,
        period_end: record.period_end as string,
        merkle_root: tagged(root),
        settlement_hash: sha256Tagged(bytes),
        signature: signer.sign(bytes),
        signing_key_id: signer.publicKeyId,
        timestamp_token: record.timestamp_token as string | null,
        checkpoint: `${body}\n${signatureLine(keyName, signer.publicKeyRaw, signer.signRaw(Buffer.from(body, "utf8")))}`,
        sealed_at: sealedAt
      }
      yield* store.insertSettlement(row)
      yield* store.setLogSize(org, size)
      return row
    })

  return {
    /** Seals every unsettled receipt of the caller's organization; null when there is none. */
    create: (principal: Principal) =>
      Effect.map(Effect.orDie(inTransaction(seal(principal.orgUuid))), (row) => (row === null ? null : asSettlement(row))),

    list: (principal: Principal, page: number, perPage: number) =>
      Effect.map(Effect.orDie(store.listSettlements(principal.orgUuid, page, perPage).pipe(Effect.provideService(SqlClient.SqlClient, sql))), ({ rows, total }) =>
        listPage(
          rows.map((row) => ({
            id: row.settlement_uuid,
            period_start: row.period_start,
            period_end: row.period_end,
            receipt_count: row.receipt_count,
            merkle_root: row.merkle_root,
            sealed_at: row.sealed_at
          })),
          { page, perPage, total }
        )
      ),

    get: (principal: Principal, settlementUuid: string) => Effect.map(found(principal.orgUuid, settlementUuid), asSettlement),

    receipts: (principal: Principal, settlementUuid: string, page: number, perPage: number) =>
      Effect.flatMap(found(principal.orgUuid, settlementUuid), (row) =>
        Effect.orDie(
          store
            .settledReceipts(principal.orgUuid, row.previous_size, row.tree_size, perPage, (page - 1) * perPage)
            .pipe(Effect.provideService(SqlClient.SqlClient, sql))
        )
      ),

    checkpoint: (principal: Principal, settlementUuid: string) =>
      Effect.gen(function* () {
        const row = yield* found(principal.orgUuid, settlementUuid)
        const signer = yield* receipts.platformSigner
        const publicKey = signer.publicKeyId === row.signing_key_id ? signer.publicKeyRaw : undefined
        return {
          settlement_uuid: row.settlement_uuid,
          origin: originOf(principal.orgUuid),
          tree_size: row.tree_size,
          merkle_root: row.merkle_root,
          checkpoint: row.checkpoint,
          verifier_key: publicKey === undefined ? yield* retiredVerifierKey(row.signing_key_id) : verifierKey(keyName, publicKey),
          signing_key_id: row.signing_key_id
        }
      }),

    inclusionProof: (principal: Principal, receiptUuid: string) =>
      Effect.gen(function* () {
        const org = principal.orgUuid
        const leaf = yield* Effect.orDie(store.leafOfReceipt(org, receiptUuid))
        if (leaf === undefined) return yield* refuse(new ReceiptNotSettled({ receipt_uuid: receiptUuid }))
        const tiles = yield* Effect.orDie(readTiles(org, tilesForInclusion(leaf.leafIndex, leaf.treeSize)))
        const { leafHash: hash, proof } = inclusionFromTiles(tiles, leaf.leafIndex, leaf.treeSize)
        return {
          settlement_uuid: leaf.settlementUuid,
          receipt_uuid: receiptUuid,
          merkle_root: leaf.merkleRoot,
          leaf_hash: tagged(hash),
          index: leaf.leafIndex,
          leaf_count: leaf.treeSize,
          siblings: proof.map(tagged)
        }
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql)),

    consistency: (principal: Principal, fromUuid: string, toUuid: string) =>
      Effect.gen(function* () {
        const org = principal.orgUuid
        const from = yield* found(org, fromUuid)
        const to = yield* found(org, toUuid)
        if (from.tree_size > to.tree_size) {
          return yield* refuse(InvalidInput.one("query.from", "the `from` settlement must not be later than the `to` settlement"))
        }
        const tiles = yield* Effect.orDie(readTiles(org, tilesForConsistency(from.tree_size, to.tree_size)))
        return {
          from: { settlement_uuid: from.settlement_uuid, tree_size: from.tree_size, merkle_root: from.merkle_root },
          to: { settlement_uuid: to.settlement_uuid, tree_size: to.tree_size, merkle_root: to.merkle_root },
          proof: consistencyFromTiles(tiles, from.tree_size, to.tree_size).map(tagged)
        }
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }

  function retiredVerifierKey(publicKeyId: string) {
    return Effect.map(receipts.jwks, ({ keys }) => {
      const key = keys.find((candidate) => candidate.kid === publicKeyId)
      return key === undefined ? "" : verifierKey(keyName, Buffer.from(key.x, "base64url"))
    })
  }
})

export class Settlements extends Context.Service<Settlements, Effect.Success<typeof makeSettlements>>()("gateway/Settlements") {
  static readonly layer = Layer.effect(Settlements, makeSettlements)
}
