/**
 * Settlements: seal an organization's unsettled receipts into its Merkle log
 * and sign the new tree head; answer inclusion and consistency proofs.
 *
 * A settlement is one transaction holding the log head's row lock, so two at
 * once queue and never settle a receipt twice. Leaves are read back in pages
 * and folded into tiles; memory stays at a page plus one tile per level.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { listPage, type Page } from "../../protocol/common.js"
import type { ConsistencyProof, InclusionProof, SettledReceipt, Settlement, SettlementCheckpoint } from "../../protocol/settlements.js"
import { checkpointBody, signatureLine, verifierKey } from "../../protocol/verifier/checkpoint.js"
import { settlementRecord } from "../../protocol/verifier/settlement.js"
import { Config } from "../platform/config.js"
import { taggedDigest } from "../platform/digest.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newUuid } from "../platform/ids.js"
import { leafHash } from "../receipts/merkle.js"
import { Receipts } from "../receipts/service.js"
import { canonicalJsonBytes, sha256Tagged } from "../receipts/signing.js"
import { ReceiptNotSettled, refuse, type SettlementError, SettlementNotFound } from "./errors.js"
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
import { type SettlementRow, settlementStore as store } from "./store.js"

/** Full tiles kept in memory for proofs (8 KB each: 4 MB). */
const TILES_CACHED = 512
const FULL_TILE_BYTES = TILE_WIDTH * 32

/** Leaves read back per query while sealing (about 100 bytes each in flight). */
const LEAF_PAGE = 32_768

const asSettlement = (row: SettlementRow): Settlement => ({
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
    Effect.flatMap(store.settlementById(org, settlementUuid).pipe(Effect.provideService(SqlClient.SqlClient, sql)), (row) =>
      row === undefined ? refuse(SettlementNotFound.of(settlementUuid)) : Effect.succeed(row)
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
      if (batch.appended === 0 || batch.periodStart === null || batch.periodEnd === null) return null
      const size = base + batch.appended
      const root = yield* extendTree(org, base, size)
      const signer = yield* receipts.platformSigner
      const sealedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const record = settlementRecord({
        id: newUuid(),
        org_uuid: org,
        period_start: batch.periodStart,
        period_end: batch.periodEnd,
        receipt_count: batch.appended,
        merkle_root: taggedDigest(root),
        signing_key_id: signer.publicKeyId,
        // The token's message imprint is the root itself (a SHA-256 value), as a receipt's is its payload hash.
        timestamp_token: yield* receipts.timestampDigest(root),
        sealed_at: sealedAt
      })
      const bytes = canonicalJsonBytes(record)
      const body = checkpointBody(originOf(org), size, root)
      const row: SettlementRow = {
        settlement_uuid: record.id as string,
        org_uuid: org,
        previous_size: base,
        tree_size: size,
        receipt_count: batch.appended,
        period_start: record.period_start as string,
        period_end: record.period_end as string,
        merkle_root: taggedDigest(root),
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

  const create = Effect.fn("Settlements.create")(function* (principal: Principal) {
    // Beginning or committing the transaction (the statements inside are the store's).
    const row = yield* inTransaction(seal(principal.orgUuid)).pipe(Effect.catchTag("SqlError", Effect.die))
    return row === null ? null : asSettlement(row)
  })

  const list = Effect.fn("Settlements.list")(function* (principal: Principal, page: number, perPage: number) {
    const { rows, total } = yield* store.listSettlements(principal.orgUuid, page, perPage).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    return listPage(
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
  })

  const get = Effect.fn("Settlements.get")(function* (principal: Principal, settlementUuid: string) {
    return asSettlement(yield* found(principal.orgUuid, settlementUuid))
  })

  const receiptsOf = Effect.fn("Settlements.receipts")(function* (principal: Principal, settlementUuid: string, page: number, perPage: number) {
    const row = yield* found(principal.orgUuid, settlementUuid)
    return yield* store
      .settledReceipts(principal.orgUuid, row.previous_size, row.tree_size, perPage, (page - 1) * perPage)
      .pipe(Effect.provideService(SqlClient.SqlClient, sql))
  })

  const checkpoint = Effect.fn("Settlements.checkpoint")(function* (principal: Principal, settlementUuid: string) {
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
  })

  const inclusionProof = Effect.fn("Settlements.inclusionProof")(function* (principal: Principal, receiptUuid: string) {
    const org = principal.orgUuid
    const leaf = yield* store.leafOfReceipt(org, receiptUuid).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    if (leaf === undefined) return yield* refuse(ReceiptNotSettled.of(receiptUuid))
    const tiles = yield* readTiles(org, tilesForInclusion(leaf.leafIndex, leaf.treeSize)).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    const { leafHash: hash, proof } = inclusionFromTiles(tiles, leaf.leafIndex, leaf.treeSize)
    return {
      settlement_uuid: leaf.settlementUuid,
      receipt_uuid: receiptUuid,
      merkle_root: leaf.merkleRoot,
      leaf_hash: taggedDigest(hash),
      index: leaf.leafIndex,
      leaf_count: leaf.treeSize,
      siblings: proof.map(taggedDigest)
    }
  })

  const consistency = Effect.fn("Settlements.consistency")(function* (principal: Principal, fromUuid: string, toUuid: string) {
    const org = principal.orgUuid
    const from = yield* found(org, fromUuid)
    const to = yield* found(org, toUuid)
    if (from.tree_size > to.tree_size) {
      return yield* refuse(InvalidInput.one("query.from", "the `from` settlement must not be later than the `to` settlement"))
    }
    const tiles = yield* readTiles(org, tilesForConsistency(from.tree_size, to.tree_size)).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    return {
      from: { settlement_uuid: from.settlement_uuid, tree_size: from.tree_size, merkle_root: from.merkle_root },
      to: { settlement_uuid: to.settlement_uuid, tree_size: to.tree_size, merkle_root: to.merkle_root },
      proof: consistencyFromTiles(tiles, from.tree_size, to.tree_size).map(taggedDigest)
    }
  })

  return Settlements.of({ create, list, get, receipts: receiptsOf, checkpoint, inclusionProof, consistency })

  function retiredVerifierKey(publicKeyId: string) {
    return Effect.map(receipts.jwks, ({ keys }) => {
      const key = keys.find((candidate) => candidate.kid === publicKeyId)
      return key === undefined ? "" : verifierKey(keyName, Buffer.from(key.x, "base64url"))
    })
  }
})

type SettlementSummary = Pick<Settlement, "id" | "period_start" | "period_end" | "receipt_count" | "merkle_root" | "sealed_at">

export interface SettlementsService {
  /** Seals every unsettled receipt of the caller's organization; null when there is none. */
  readonly create: (principal: Principal) => Effect.Effect<Settlement | null>
  readonly list: (principal: Principal, page: number, perPage: number) => Effect.Effect<Page<SettlementSummary>>
  readonly get: (principal: Principal, settlementUuid: string) => Effect.Effect<Settlement, SettlementError>
  readonly receipts: (principal: Principal, settlementUuid: string, page: number, perPage: number) => Effect.Effect<ReadonlyArray<SettledReceipt>, SettlementError>
  readonly checkpoint: (principal: Principal, settlementUuid: string) => Effect.Effect<SettlementCheckpoint, SettlementError>
  readonly inclusionProof: (principal: Principal, receiptUuid: string) => Effect.Effect<InclusionProof, SettlementError>
  readonly consistency: (principal: Principal, fromUuid: string, toUuid: string) => Effect.Effect<ConsistencyProof, SettlementError>
}

export class Settlements extends Context.Service<Settlements, SettlementsService>()("gateway/Settlements") {
  static readonly layer = Layer.effect(Settlements, makeSettlements)
}
