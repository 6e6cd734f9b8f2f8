// A small JSON Schema validator for the schemas the tests use (type, properties, required,
// additionalProperties: false, enum, const, integer/number bounds, string length, items).
// Returns a list of problems ([] = valid).
export function validate(value, schema, path = '$') {
  const errs = [];
  const type = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    errs.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) errs.push(`${path}: not the const`);
  switch (schema.type) {
    case 'object':
      if (type !== 'object') return [`${path}: expected object, got ${type}`];
      for (const r of schema.required ?? []) if (!(r in value)) errs.push(`${path}.${r}: required`);
      for (const [k, v] of Object.entries(value)) {
        if (schema.properties?.[k]) errs.push(...validate(v, schema.properties[k], `${path}.${k}`));
        else if (schema.additionalProperties === false) errs.push(`${path}.${k}: not allowed`);
      }
      break;
    case 'array':
      if (type !== 'array') return [`${path}: expected array, got ${type}`];
      if (schema.minItems !== undefined && value.length < schema.minItems) errs.push(`${path}: too few items`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) errs.push(`${path}: too many items`);
      if (schema.items) value.forEach((v, i) => errs.push(...validate(v, schema.items, `${path}[${i}]`)));
      break;
    case 'integer':
    case 'number':
      if (type !== 'number' || (schema.type === 'integer' && !Number.isInteger(value))) return [`${path}: expected ${schema.type}`];
      if (schema.minimum !== undefined && value < schema.minimum) errs.push(`${path}: below minimum`);
      if (schema.maximum !== undefined && value > schema.maximum) errs.push(`${path}: above maximum`);
      break;
    case 'string':
      if (type !== 'string') return [`${path}: expected string, got ${type}`];
      if (schema.maxLength !== undefined && [...value].length > schema.maxLength) errs.push(`${path}: too long`);
      if (schema.minLength !== undefined && [...value].length < schema.minLength) errs.push(`${path}: too short`);
      break;
    case 'boolean':
      if (type !== 'boolean') errs.push(`${path}: expected boolean`);
      break;
    case undefined:
      break;
    default:
      if (type !== schema.type) errs.push(`${path}: expected ${schema.type}`);
  }
  return errs;
}
