'use strict';

// The mysql2 adapter: query is the text protocol, execute the binary one
// (a server-side prepared statement), bulk is one query of an array of rows.

const mysql = require('mysql2/promise');
const { TypedParameter } = require('mysql2');

// Values come back exactly as the server sent them: DATE/DATETIME/TIMESTAMP as
// strings (no Date, which holds milliseconds only), BIGINT and DECIMAL as strings
// (no float64 rounding); timezone 'Z' makes a bound Date go out in UTC.
const OPTIONS = {
  dateStrings: true,
  supportBigNumbers: true,
  bigNumberStrings: true,
  decimalNumbers: false,
  timezone: 'Z',
};

const FLAG_NOT_NULL = 1;
const FLAG_PRI_KEY = 2;
const FLAG_UNSIGNED = 32;

class Conn {
  constructor(c) {
    this.c = c;
  }
  async query(sql, params) {
    const [rows, fields] = await this.c.query(sql, params);
    return { rows, fields: fieldsOf(fields) };
  }
  async execute(sql, params) {
    const [rows, fields] = await this.c.execute(sql, params || []);
    return { rows, fields: fieldsOf(fields) };
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
  // bulk sends rows as multi-row INSERTs (mysql2 expands `VALUES ?` of an array of
  // arrays), in chunks that keep each packet small.
  async bulk(table, columns, rows) {
    const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ?`;
    for (let i = 0; i < rows.length; i += 10000) {
      await this.c.query(sql, [rows.slice(i, i + 10000)]);
    }
  }
  close() {
    return this.c.end();
  }
}

function fieldsOf(fields) {
  if (!fields) return [];
  return fields.map((f) => ({
    name: f.name,
    length: f.columnLength,
    decimals: f.decimals,
    notNull: Boolean(f.flags & FLAG_NOT_NULL),
    primaryKey: Boolean(f.flags & FLAG_PRI_KEY),
    unsigned: Boolean(f.flags & FLAG_UNSIGNED),
    type: f.columnType,
  }));
}

module.exports = {
  name: 'mysql2',
  options: OPTIONS,
  async connect(env) {
    const c = await mysql.createConnection({
      host: env.host,
      port: env.port,
      user: env.user,
      password: env.password,
      database: env.database,
      ...OPTIONS,
    });
    return new Conn(c);
  },
  // A BIGINT bound as a LONGLONG (mysql2 binds a plain number as a DOUBLE).
  bigint(v) {
    return TypedParameter.BIGINT(BigInt(v));
  },
  // A uint64 bound as an unsigned LONGLONG.
  uint64(v) {
    return TypedParameter.BIGINT.unsigned(BigInt(v));
  },
  uint64Spelling: 'an unsigned LONGLONG',
};
