import { describe, expect, it } from 'vitest';

import {
  diskClassOf,
  fieldsOf,
  initialValues,
  splitList,
  toOptions,
  validate,
  type FormField,
  type JsonSchema,
} from './schema-form';

function childrenOf(field: FormField | undefined): FormField[] {
  return field?.kind === 'group' ? field.children : [];
}

// The shape of the Spark manifest's options_schema (trimmed).
const SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    roles: {
      type: 'object',
      properties: {
        worker: {
          type: 'object',
          properties: {
            count: { type: 'integer', minimum: 1, maximum: 64, default: 2 },
            cpus: { type: 'number', minimum: 0.25, maximum: 64, default: 0.5 },
            mem_mb: { type: 'integer', minimum: 1024, default: 2048 },
            disks: {
              type: 'object',
              properties: { hdd: { type: 'integer', minimum: 0, maximum: 12, default: 2 }, ssd: { type: 'integer' } },
            },
          },
        },
      },
    },
    mode: { enum: ['spread', 'pack'], default: 'spread' },
    name: { type: 'string', minLength: 3 },
    wait_for_resources: { type: 'boolean', default: false },
    ignored: { type: 'array' },
  },
  required: ['name'],
};

describe('fieldsOf', () => {
  it('nests groups for objects and keeps the schema order, leaving unknown types out', () => {
    const fields = fieldsOf(SCHEMA);
    expect(fields.map((f) => [f.kind, f.path])).toEqual([
      ['group', 'roles'],
      ['enum', 'mode'],
      ['string', 'name'],
      ['boolean', 'wait_for_resources'],
    ]);
    const worker = childrenOf(fields[0])[0];
    expect(childrenOf(worker).map((f) => f.path)).toEqual([
      'roles.worker.count',
      'roles.worker.cpus',
      'roles.worker.mem_mb',
      'roles.worker.disks',
    ]);
  });

  it('labels fields readably, with units', () => {
    const worker = childrenOf(fieldsOf(SCHEMA)[0])[0];
    expect(childrenOf(worker).map((f) => f.label)).toEqual(['Count', 'Cpus', 'Mem (MiB)', 'Disks']);
  });
});

describe('initialValues', () => {
  it('starts from every default, empty where there is none', () => {
    expect(initialValues(fieldsOf(SCHEMA))).toEqual({
      'roles.worker.count': '2',
      'roles.worker.cpus': '0.5',
      'roles.worker.mem_mb': '2048',
      'roles.worker.disks.hdd': '2',
      'roles.worker.disks.ssd': '',
      mode: 'spread',
      name: '',
      wait_for_resources: false,
    });
  });
});

describe('validate', () => {
  const fields = fieldsOf(SCHEMA);
  const valid = { ...initialValues(fields), name: 'abc' };

  it('accepts the defaults once required fields are filled', () => {
    expect(validate(fields, valid)).toEqual({});
    expect(validate(fields, initialValues(fields))).toEqual({ name: 'is required' });
  });

  it('names each bad value by its path', () => {
    expect(
      validate(fields, {
        ...valid,
        'roles.worker.count': '65',
        'roles.worker.cpus': '0.1',
        'roles.worker.mem_mb': '1.5',
        'roles.worker.disks.hdd': 'two',
        mode: 'random',
        name: 'ab',
      }),
    ).toEqual({
      'roles.worker.count': 'must be at most 64',
      'roles.worker.cpus': 'must be at least 0.25',
      'roles.worker.mem_mb': 'must be a whole number',
      'roles.worker.disks.hdd': 'must be a whole number',
      mode: 'is not one of the choices',
      name: 'needs 3+ characters',
    });
  });
});

describe('toOptions', () => {
  it('builds the nested options with numbers, booleans and enum values, leaving empty inputs out', () => {
    const fields = fieldsOf(SCHEMA);
    const values = { ...initialValues(fields), name: 'abc', 'roles.worker.count': '3', wait_for_resources: true };
    expect(toOptions(fields, values)).toEqual({
      roles: { worker: { count: 3, cpus: 0.5, mem_mb: 2048, disks: { hdd: 2 } } },
      mode: 'spread',
      name: 'abc',
      wait_for_resources: true,
    });
  });
});

describe('diskClassOf', () => {
  it('recognises disk count fields by their path', () => {
    expect(diskClassOf('roles.worker.disks.hdd')).toBe('hdd');
    expect(diskClassOf('roles.worker.count')).toBeNull();
  });
});

// The placement option every product has (as the api-server serves it for Spark: the shared
// fragment from spindle_common.catalog, anti_affinity limited to Spark's roles).
const NODE_NAMES: JsonSchema = {
  type: 'array',
  uniqueItems: true,
  maxItems: 256,
  default: [],
  items: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
};
const WITH_PLACEMENT: JsonSchema = {
  type: 'object',
  properties: {
    placement: {
      type: 'object',
      properties: {
        strategy: { enum: ['spread', 'pack'], default: 'spread' },
        anti_affinity: { title: 'Anti-affinity', type: 'array', uniqueItems: true, default: [], items: { enum: ['master', 'worker'] } },
        preferred_nodes: NODE_NAMES,
        excluded_nodes: NODE_NAMES,
      },
    },
  },
};

describe('the placement option', () => {
  const fields = fieldsOf(WITH_PLACEMENT);

  it('is a strategy select, a checkbox per role and two node lists', () => {
    expect(childrenOf(fields[0]).map((f) => [f.kind, f.path, f.label])).toEqual([
      ['enum', 'placement.strategy', 'Strategy'],
      ['choices', 'placement.anti_affinity', 'Anti-affinity'],
      ['list', 'placement.preferred_nodes', 'Preferred nodes'],
      ['list', 'placement.excluded_nodes', 'Excluded nodes'],
    ]);
    expect(initialValues(fields)).toEqual({
      'placement.strategy': 'spread',
      'placement.anti_affinity': [],
      'placement.preferred_nodes': '',
      'placement.excluded_nodes': '',
    });
  });

  it('sends the roles in the schema order and the node lists split on commas and spaces', () => {
    const values = {
      ...initialValues(fields),
      'placement.strategy': 'pack',
      'placement.anti_affinity': ['worker', 'master'],
      'placement.excluded_nodes': 'node-2, node-3  gpu.rack1,',
    };
    expect(validate(fields, values)).toEqual({});
    expect(toOptions(fields, values)).toEqual({
      placement: { strategy: 'pack', anti_affinity: ['master', 'worker'], excluded_nodes: ['node-2', 'node-3', 'gpu.rack1'] },
    });
    expect(toOptions(fields, initialValues(fields))).toEqual({ placement: { strategy: 'spread', anti_affinity: [] } });
  });

  it('names bad node names, repeated nodes and unknown roles', () => {
    expect(
      validate(fields, {
        ...initialValues(fields),
        'placement.anti_affinity': ['executor'],
        'placement.preferred_nodes': 'node-1, node/2',
        'placement.excluded_nodes': 'node-1 node-1',
      }),
    ).toEqual({
      'placement.anti_affinity': 'has executor, which is not one of the choices',
      'placement.preferred_nodes': 'node/2: has characters that are not allowed',
      'placement.excluded_nodes': 'names an entry twice',
    });
    expect(splitList(' a,b  c ,, ')).toEqual(['a', 'b', 'c']);
  });
});
