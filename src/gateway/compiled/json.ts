/**
 * JSON response bodies written straight from a value by a writer compiled from its
 * schema, in one pass, instead of encoding the value with the schema (a copy) and then
 * `JSON.stringify`-ing the copy. The idea is fast-json-stringify's; the output is the
 * one the schema's encoding would give:
 * - an object writes the schema's keys, in the schema's order, and nothing else (a key
 *   the schema does not declare never reaches the client);
 * - an optional key whose value is undefined is left out, as `JSON.stringify` does;
 * - a node that transforms its value (`encoding`: dates, classes, renamed keys) is
 *   encoded by its own schema and then written.
 * A value that does not fit (a missing required key, a string where a number is due)
 * makes the writer return undefined, and the caller encodes with the schema instead, so
 * failures keep their schema messages. Checks (filters) are not re-run on the way out:
 * they guard what clients send; responses are built by our own code.
 */
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/** The body as JSON text, or undefined when the value does not fit the schema's shape. */
export type JsonWriter = (value: unknown) => string | undefined

/** Returned by a node's writer when the value does not fit. */
const MISS: unique symbol = Symbol("miss")
type Write = (value: unknown) => string | typeof MISS

const json = (value: unknown): string | typeof MISS => {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? MISS : text
  } catch {
    return MISS
  }
}

/** A node with a transformation: encoded by its own schema, the result written as JSON. */
const viaSchema = (ast: SchemaAST.AST): Write => {
  const encode = Schema.encodeUnknownSync(Schema.make<Schema.Top>(ast) as Schema.Codec<unknown, unknown>)
  return (value) => {
    try {
      return json(encode(value))
    } catch {
      return MISS
    }
  }
}

const acceptsUndefined = (ast: SchemaAST.AST): boolean =>
  ast._tag === "Undefined" || ast._tag === "Void" || ast._tag === "Unknown" || ast._tag === "Any" || (ast._tag === "Union" && ast.types.some(acceptsUndefined))

const objectWriter = (ast: SchemaAST.Objects): Write | undefined => {
  if (ast.indexSignatures.length > 0) return undefined
  const fields: Array<{ readonly key: string; readonly prefix: string; readonly optional: boolean; readonly write: Write }> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string") return undefined
    const write = compile(property.type)
    if (write === undefined) return undefined
    fields.push({
      key: property.name,
      prefix: `${JSON.stringify(property.name)}:`,
      optional: SchemaAST.isOptional(property.type) || acceptsUndefined(property.type),
      write
    })
  }
  return (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return MISS
    const record = value as Record<string, unknown>
    let out = "{"
    let first = true
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!
      const item = record[field.key]
      if (item === undefined) {
        if (field.optional) continue
        return MISS
      }
      const text = field.write(item)
      if (text === MISS) return MISS
      out += first ? field.prefix + text : `,${field.prefix}${text}`
      first = false
    }
    return `${out}}`
  }
}

const arrayWriter = (ast: SchemaAST.Arrays): Write | undefined => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
  const item = compile(ast.rest[0]!)
  if (item === undefined) return undefined
  return (value) => {
    if (!Array.isArray(value)) return MISS
    if (value.length === 0) return "[]"
    let out = "["
    for (let i = 0; i < value.length; i++) {
      // JSON.stringify writes null for an undefined element.
      const text = value[i] === undefined ? "null" : item(value[i])
      if (text === MISS) return MISS
      out += i === 0 ? text : `,${text}`
    }
    return `${out}]`
  }
}

const compile = (ast: SchemaAST.AST): Write | undefined => {
  if (ast.encoding !== undefined) return viaSchema(ast)
  switch (ast._tag) {
    case "String":
      return (value) => (typeof value === "string" ? JSON.stringify(value) : MISS)
    case "Number":
      // NaN and the infinities are written as null, as JSON.stringify writes them.
      return (value) => (typeof value === "number" ? JSON.stringify(value) : MISS)
    case "Boolean":
      return (value) => (value === true ? "true" : value === false ? "false" : MISS)
    case "Null":
      return (value) => (value === null ? "null" : MISS)
    case "Literal": {
      const literal = ast.literal
      if (typeof literal === "bigint") return undefined
      const text = JSON.stringify(literal)
      return (value) => (value === literal ? text : MISS)
    }
    case "Unknown":
    case "Any":
      return json
    case "Objects":
      return objectWriter(ast)
    case "Arrays":
      return arrayWriter(ast)
    case "Union": {
      const members: Write[] = []
      for (const type of ast.types) {
        // An undefined member only matters for optional keys, handled by the object.
        if (type._tag === "Undefined" || type._tag === "Void") continue
        const write = compile(type)
        if (write === undefined) return undefined
        members.push(write)
      }
      return (value) => {
        for (let i = 0; i < members.length; i++) {
          const text = members[i]!(value)
          if (text !== MISS) return text
        }
        return MISS
      }
    }
    default:
      // Declarations, suspended (recursive) schemas, tuples, symbols, bigints: the schema encodes them.
      // (So a writer never recurses into itself: without Suspend a schema's AST has no cycle.)
      return undefined
  }
}

/** A writer for the schema's bodies, or undefined when its shape is one the schema must encode itself. */
export const compileJsonWriter = (schema: Schema.Top): JsonWriter | undefined => {
  const write = compile(schema.ast)
  if (write === undefined) return undefined
  return (value) => {
    const text = write(value)
    return text === MISS ? undefined : text
  }
}
