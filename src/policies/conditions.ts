/**
 * Rules-mode conditions: validation of the client's `conditions` input and compilation
 * into predicates (regexes compiled once, `in` lists turned into sets).
 */
import type { RE2JS } from "re2js"
import { ConditionFields, ConditionOperators } from "../../protocol/lists.js"
import { compileSafeRegex } from "../scan/safe-regex.js"
import { type Issue, isRecord, type ValidationFailure } from "../scan/types.js"

export type { Issue }

/** The contract's operators, and `ne`, read as `neq`. */
export const CONDITION_OPS = [...ConditionOperators, "ne"] as const
export type ConditionOp = (typeof CONDITION_OPS)[number]

/** Top-level fields of the evaluated action; `context.<key>` addresses the authorize `context` object. */
export const CONDITION_FIELDS = ConditionFields
export type ConditionField = (typeof CONDITION_FIELDS)[number]

export const MAX_CONDITIONS = 100
export const MAX_LIST_VALUES = 1_000
export const MAX_STRING_VALUE_LENGTH = 10_000

/** A condition as the client sends it. */
export interface ConditionInput {
  readonly field: string
  readonly op: string
  readonly value: unknown
}

export type Scalar = string | number | boolean

/** How a compiled condition reads its field from the subject. */
export type FieldRef =
  | { readonly kind: "top"; readonly name: ConditionField }
  | { readonly kind: "context"; readonly key: string; readonly path: ReadonlyArray<string> }

export type CompiledCondition =
  | { readonly op: "eq" | "neq"; readonly field: FieldRef; readonly value: Scalar }
  | { readonly op: "in" | "not_in"; readonly field: FieldRef; readonly values: ReadonlySet<Scalar> }
  | { readonly op: "contains"; readonly field: FieldRef; readonly value: Scalar }
  | { readonly op: "regex"; readonly field: FieldRef; readonly regex: RE2JS }
  | { readonly op: "gt" | "lt" | "gte" | "lte"; readonly field: FieldRef; readonly value: number }

export interface CompiledConditions {
  readonly conditions: ReadonlyArray<CompiledCondition>
  /** The normalized array form as given (for detail output: `conditions` as it was sent). */
  readonly source: ReadonlyArray<ConditionInput>
}

export type ConditionsResult =
  | { readonly ok: true; readonly compiled: CompiledConditions }
  | { readonly ok: false; readonly code: "CONDITIONS_REQUIRED"; readonly message: string }
  | ValidationFailure

export interface CompileConditionsOptions {
  /** Rules mode needs at least one condition (400 CONDITIONS_REQUIRED). Default true. */
  readonly required?: boolean
  /** Prefix of issue paths. Default "conditions". */
  readonly path?: string
}

const isScalar = (value: unknown): value is Scalar =>
  typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))

/** Accepts the array form and the detail-output form `{all: [...]}`; anything else is not a list. */
export const conditionsArray = (input: unknown): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(input)) return input
  if (isRecord(input) && Array.isArray(input.all)) return input.all
  return undefined
}

const parseField = (field: unknown): FieldRef | string => {
  if (typeof field !== "string") return "must be a string"
  if ((CONDITION_FIELDS as ReadonlyArray<string>).includes(field)) {
    return { kind: "top", name: field as ConditionField }
  }
  if (field.startsWith("context.")) {
    const key = field.slice("context.".length)
    const path = key.split(".")
    if (key.length === 0 || path.some((segment) => segment.length === 0)) {
      return "context field needs a key, as in context.amount"
    }
    return { kind: "context", key, path }
  }
  return `unknown field; use one of ${CONDITION_FIELDS.join(", ")} or context.<key>`
}

type ValueCheck = { readonly ok: true; readonly compiled: CompiledCondition } | { readonly ok: false; readonly issue: Issue; readonly regex?: boolean }

const compileOne = (op: ConditionOp, field: FieldRef, value: unknown, path: string): ValueCheck => {
  const fail = (message: string, regex = false): ValueCheck => ({ ok: false, issue: { path, message }, regex })
  switch (op) {
    case "eq":
    case "neq":
    case "ne":
    case "contains": {
      if (!isScalar(value)) return fail("must be a string, number or boolean")
      if (typeof value === "string" && value.length > MAX_STRING_VALUE_LENGTH) {
        return fail(`must be at most ${MAX_STRING_VALUE_LENGTH} characters`)
      }
      if (op === "contains") return { ok: true, compiled: { op, field, value } }
      return { ok: true, compiled: { op: op === "eq" ? "eq" : "neq", field, value } }
    }
    case "in":
    case "not_in": {
      if (!Array.isArray(value)) return fail(`${op} needs an array value`)
      if (value.length > MAX_LIST_VALUES) return fail(`at most ${MAX_LIST_VALUES} values`)
      if (!value.every(isScalar)) return fail("every value must be a string, number or boolean")
      return { ok: true, compiled: { op, field, values: new Set(value) } }
    }
    case "regex": {
      if (typeof value !== "string") return fail("regex needs a string pattern")
      const compiled = compileSafeRegex(value)
      if (!compiled.ok) return fail(compiled.message, true)
      return { ok: true, compiled: { op, field, regex: compiled.regex } }
    }
    case "gt":
    case "lt":
    case "gte":
    case "lte": {
      if (typeof value !== "number" || !Number.isFinite(value)) return fail(`${op} needs a number value`)
      return { ok: true, compiled: { op, field, value } }
    }
  }
}

/**
 * Validates and compiles conditions. Every problem is listed; when the only problems
 * are regexes that do not compile (or are too long) the code is INVALID_REGEX.
 */
export const compileConditions = (input: unknown, options: CompileConditionsOptions = {}): ConditionsResult => {
  const required = options.required ?? true
  const base = options.path ?? "conditions"
  if (input === undefined || input === null) {
    if (required) return { ok: false, code: "CONDITIONS_REQUIRED", message: "rules policies need conditions" }
    return { ok: true, compiled: { conditions: [], source: [] } }
  }
  const items = conditionsArray(input)
  if (items === undefined) {
    return {
      ok: false,
      code: "VALIDATION_ERROR",
      message: "conditions is invalid",
      issues: [{ path: base, message: "must be an array of {field, op, value} (or {all: [...]})" }]
    }
  }
  if (items.length === 0 && required) {
    return { ok: false, code: "CONDITIONS_REQUIRED", message: "rules policies need at least one condition" }
  }
  const shapeIssues: Array<Issue> = []
  const regexIssues: Array<Issue> = []
  if (items.length > MAX_CONDITIONS) {
    shapeIssues.push({ path: base, message: `at most ${MAX_CONDITIONS} conditions` })
  }
  const compiled: Array<CompiledCondition> = []
  const source: Array<ConditionInput> = []
  items.forEach((item, index) => {
    const path = `${base}[${index}]`
    if (!isRecord(item)) {
      shapeIssues.push({ path, message: "must be an object {field, op, value}" })
      return
    }
    const field = parseField(item.field)
    if (typeof field === "string") shapeIssues.push({ path: `${path}.field`, message: field })
    const op = item.op
    const knownOp = typeof op === "string" && (CONDITION_OPS as ReadonlyArray<string>).includes(op)
    if (!knownOp) shapeIssues.push({ path: `${path}.op`, message: `must be one of ${CONDITION_OPS.join(", ")}` })
    if (!("value" in item)) {
      shapeIssues.push({ path: `${path}.value`, message: "is required" })
      return
    }
    if (typeof field === "string" || !knownOp) return
    const result = compileOne(op as ConditionOp, field, item.value, `${path}.value`)
    if (!result.ok) {
      ;(result.regex ? regexIssues : shapeIssues).push(result.issue)
      return
    }
    compiled.push(result.compiled)
    source.push({ field: item.field as string, op: op as string, value: item.value })
  })
  if (shapeIssues.length > 0) {
    return {
      ok: false,
      code: "VALIDATION_ERROR",
      message: "conditions is invalid",
      issues: [...shapeIssues, ...regexIssues]
    }
  }
  if (regexIssues.length > 0) {
    return { ok: false, code: "INVALID_REGEX", message: regexIssues[0].message, issues: regexIssues }
  }
  return { ok: true, compiled: { conditions: compiled, source } }
}
