/**
 * The Ethereum execution-apis OpenRPC definitions (vendored in test/vendor/execution-apis/src/, see its README) as
 * JSON-schema validators (ajv): a method's result schema, or a named component schema.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './paths.js';

export const SPEC_DIR = join(REPO_ROOT, 'test', 'vendor', 'execution-apis', 'src');
const SCHEMAS_DIR = 'schemas';

export interface SpecMethod {
  name: string;
  params?: { name: string; required?: boolean; schema: unknown }[];
  result?: { schema: unknown };
  examples?: { params?: { value: unknown }[] }[];
}

export interface Spec {
  /** component schemas by name (Block, TransactionInfo, ReceiptInfo, uint, …) */
  schemas: Record<string, unknown>;
  /** every method of every namespace folder (eth, debug, txpool), by name */
  methods: Map<string, SpecMethod>;
}

function loadSpec(): Spec {
  const yamlFiles = (dir: string) => readdirSync(join(SPEC_DIR, dir)).filter((f) => f.endsWith('.yaml')).sort();
  const schemas: Record<string, unknown> = {};
  for (const f of yamlFiles(SCHEMAS_DIR)) Object.assign(schemas, parseYaml(readFileSync(join(SPEC_DIR, SCHEMAS_DIR, f), 'utf8')));
  const methods = new Map<string, SpecMethod>();
  const namespaces = readdirSync(SPEC_DIR, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== SCHEMAS_DIR);
  for (const ns of namespaces) {
    for (const f of yamlFiles(ns.name)) {
      for (const m of parseYaml(readFileSync(join(SPEC_DIR, ns.name, f), 'utf8')) as SpecMethod[]) methods.set(m.name, m);
    }
  }
  return { schemas, methods };
}

export const spec: Spec = loadSpec();

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({
  $id: 'execution-apis',
  components: { schemas: spec.schemas },
  results: Object.fromEntries([...spec.methods].filter(([, m]) => m.result).map(([n, m]) => [n, m.result!.schema])),
});
const validators = new Map<string, ValidateFunction>();

function validator(ref: string): ValidateFunction {
  let v = validators.get(ref);
  if (v === undefined) {
    v = ajv.compile({ $ref: `execution-apis#/${ref}` });
    validators.set(ref, v);
  }
  return v;
}

/** Why `value` is not a valid result of `method` (undefined when it is). Throws if the spec has no result schema. */
export function resultErrors(method: string, value: unknown): string | undefined {
  if (!spec.methods.get(method)?.result) throw new Error(`execution-apis has no result schema for ${method}`);
  const validate = validator(`results/${method}`);
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

/** Why `value` does not match the component schema `name` (undefined when it does). */
export function componentErrors(name: string, value: unknown): string | undefined {
  if (!(name in spec.schemas)) throw new Error(`execution-apis has no component schema ${name}`);
  const validate = validator(`components/schemas/${name}`);
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

/** Asserts `value` validates against the method's result schema (which must exist). */
export function assertConforms(method: string, value: unknown): void {
  assert.ok(spec.methods.get(method)?.result, `execution-apis has a result schema for ${method}`);
  const errors = resultErrors(method, value);
  assert.ok(errors === undefined, `${method} result violates the schema: ${errors}\n${JSON.stringify(value)}`);
}

/** Asserts `value` validates against the component schema `name`. */
export function assertMatchesSchema(name: string, value: unknown): void {
  const errors = componentErrors(name, value);
  assert.ok(errors === undefined, `${name}: ${errors}\n${JSON.stringify(value)}`);
}

/** A schema of our own, which may `$ref` execution-apis parts: `{ $ref: COMPONENT('uint') }`. */
export const COMPONENT = (name: string): string => `execution-apis#/components/schemas/${name}`;

const ownValidators = new Map<string, ValidateFunction>();

/** Why `value` does not match `schema` (undefined when it does). */
export function schemaErrors(schema: object, value: unknown): string | undefined {
  const key = JSON.stringify(schema);
  let validate = ownValidators.get(key);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    ownValidators.set(key, validate);
  }
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}
