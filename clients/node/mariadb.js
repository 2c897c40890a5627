'use strict';

// The Node mariadb connector adapter: query is the text protocol, execute the
// binary one, bulk is batch().

const mariadb = require('mariadb');

// dateStrings keeps DATE/DATETIME/TIMESTAMP as the server's strings (a Date holds
// milliseconds only); supportBigNumbers with bigNumberStrings keeps BIGINT and
// DECIMAL as strings; the process runs with TZ=UTC, so a bound Date (written with
// local-time getters) goes out in UTC.
const OPTIONS = {
  dateStrings: true,
  supportBigNumbers: true,
  bigNumberStrings: true,
  bigIntAsNumber: false,
  decimalAsNumber: false,
  autoJsonMap: true,
};

const FLAG_NOT_NULL = 1;
const FLAG_PRI_KEY = 2;
const FLAG_UNSIGNED = 32;

class Conn {
  constructor(c) {
    this.c = c;
  }
  async query(sql, params) {
    const rows = await this.c.query(sql, params);
    return { rows: Array.isArray(rows) ? rows : [], fields: fieldsOf(rows.meta) };
  }
  async execute(sql, params) {
    const rows = await this.c.execute(sql, params || []);
    return { rows: Array.isArray(rows) ? rows : [], fields: fieldsOf(rows.meta) };
  }
  escape(s) {
    return this.c.escape(s);
  }
  begin() {
    return this.c.beginTransaction();
  }
  commit() {
    return this.c.commit();
  }
  rollback() {
    return this.c.rollback();
  }
  async bulk(table, columns, rows) {
    const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
    await this.c.batch(sql, rows);
  }
  close() {
    return this.c.end();
  }
}

function fieldsOf(meta) {
  if (!meta) return [];
  return meta.map((f) => ({
    name: f.name(),
    length: f.columnLength,
    decimals: f.scale,
    notNull: Boolean(f.flags & FLAG_NOT_NULL),
    primaryKey: Boolean(f.flags & FLAG_PRI_KEY),
    unsigned: Boolean(f.flags & FLAG_UNSIGNED),
    type: f.columnType,
  }));
}

module.exports = {
  name: 'mariadb',
  options: OPTIONS,
  async connect(env) {
    const c = await mariadb.createConnection({
      host: env.host,
      port: env.port,
      user: env.user,
      password: env.password,
      database: env.database,
      ...OPTIONS,
    });
    return new Conn(c);
  },
  // The connector binds a BigInt below 2^63 as a LONGLONG.
  bigint(v) {
    return BigInt(v);
  },
  // The connector has no unsigned 64-bit bind: a BigInt of 2^63 or more goes out as text.
  uint64(v) {
    return BigInt(v);
  },
  uint64Spelling: 'a BigInt (the connector sends 2^63 and above as text)',
};
