/** Why a compliance bundle request was refused: the bundles' one error, whose reasons are the wire's refusals (protocol/compliance-bundles.ts). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { BundleNotFound, BundleReceiptNotFound, BundleTooLarge, DuplicateBundleRequest } from "../../protocol/compliance-bundles.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { BundleNotFound, BundleReceiptNotFound, BundleTooLarge, DuplicateBundleRequest }

export class BundlesError extends Schema.TaggedError<BundlesError>()("BundlesError", {
  reason: Reasons([BundleNotFound, BundleReceiptNotFound, BundleTooLarge, DuplicateBundleRequest, InvalidInput])
}) {}

export const refuse = (reason: BundlesError["reason"]) => Effect.fail(new BundlesError({ reason }))
