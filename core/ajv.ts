import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default import is the module object, whose `.default` is the plugin.
const addFormats = addFormatsModule.default;

/** Every JSON Schema in Gristmill is draft 2020-12 with the standard formats (date-time, uri, email, ...). */
export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, ...options });
  addFormats(ajv);
  return ajv;
}
