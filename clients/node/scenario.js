'use strict';

// The client matrix's scenario (clients/SCENARIO.md) for one Node client:
// node scenario.js mysql2|mariadb. Everything is checked over the wire.

process.env.TZ = 'UTC';

const { Tally, Mismatch, expect, show } = require('./check.js');

const ADAPTERS = { mysql2: './mysql2.js', mariadb: './mariadb.js' };

const COLUMNS = ['id', 'b', 'i8', 'u8', 'i16', 'i32', 'u32', 'i64', 'f32', 'f64', 'dec', 'vc', 'tx', 'js', 'vb', 'd', 'dt', 'ts'];
const COLS_SQL = COLUMNS.map((c) => '`' + c + '`').join(', ');
const PLACEHOLDERS = COLUMNS.map(() => '?').join(', ');

const TYPES_DDL =
  'id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, i32 INT, u32 INT UNSIGNED, ' +
  'i64 BIGINT, f32 FLOAT, f64 DOUBLE, `dec` DECIMAL(20,6), vc VARCHAR(64), tx TEXT, js JSON, vb VARBINARY(64), ' +
  'd DATE, dt DATETIME(6), ts TIMESTAMP(6), PRIMARY KEY (id)';

const DECLARED = {
  id: 'bigint', b: 'tinyint(1)', i8: 'tinyint', u8: 'tinyint unsigned', i16: 'smallint', i32: 'int',
  u32: 'int unsigned', i64: 'bigint', f32: 'float', f64: 'double', dec: 'decimal(20,6)', vc: 'varchar(64)',
  tx: 'text', js: 'json', vb: 'varbinary(64)', d: 'date', dt: 'datetime(6)', ts: 'timestamp(6)',
};

const DATETIMES = [
  '2024-06-15 10:20:30.000001', '2024-06-15 10:20:30.050000', '2024-06-15 10:20:30.500000',
  '2024-06-15 10:20:30.123456', '0001-01-01 00:00:00.000000', '9999-12-31 23:59:59.999999',
  '1969-01-01 00:00:00.000000', '2040-01-01 00:00:00.000000',
];
const STRINGS = ["it's", 'a"b', 'back\\slash', 'emoji \u{1F600}', 'nul\0inside'];
const JSON_TEXT = '{"a": [1, 2, {"b": null}]}';
const BYTES = Buffer.from([0x00, 0xff, 0x27, 0x5c]);

// The rows of `types`, as the canonical values the server must hand back: ints and
// decimals as decimal text, booleans as 1/0, floats as numbers, dates as text.
function typeRows() {
  const rows = [];
  const full = {
    b: '1', i8: '127', u8: '255', i16: '32767', i32: '2147483647', u32: '4294967295',
    i64: '9223372036854775807', f32: 1.5, f64: 1e308, dec: '12345678901234.123456',
    js: JSON_TEXT, vb: BYTES,
  };
  const low = {
    b: '0', i8: '-128', u8: '0', i16: '-32768', i32: '-2147483648', u32: '0',
    i64: '-9223372036854775808', f32: -1.5, f64: -1e308, dec: '-12345678901234.123456',
    js: '[]', vb: Buffer.alloc(0),
  };
  // Each datetime goes into dt of one row and ts of another, next to ordinary
  // values, so that a refused value costs only its own row.
  const fixed = '2024-01-02 03:04:05.000000';
  const extremeDates = { '0001-01-01 00:00:00.000000': '0001-01-01', '9999-12-31 23:59:59.999999': '9999-12-31' };
  const both = [...DATETIMES.map((v) => ({ dt: v, ts: fixed })), ...DATETIMES.map((v) => ({ dt: fixed, ts: v }))];
  both.forEach((pair, k) => {
    const base = k % 2 === 0 ? full : low;
    rows.push({
      n: k + 1, ...base, vc: STRINGS[k % STRINGS.length], tx: STRINGS[(k + 1) % STRINGS.length],
      d: extremeDates[pair.dt] || '2024-06-15', ...pair,
    });
  });
  const nulls = { n: rows.length + 1 };
  for (const c of COLUMNS.slice(1)) nulls[c] = null;
  rows.push(nulls);
  return rows;
}

function parseDateTime(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?$/.exec(s);
  if (!m) return null;
  return {
    y: +m[1], mo: +m[2], d: +m[3], h: +(m[4] || 0), mi: +(m[5] || 0), s: +(m[6] || 0),
    us: m[7] ? +m[7].padEnd(6, '0') : 0,
  };
}

// A JS Date for a datetime with whole milliseconds (a Date holds no finer), else null.
function dateObject(s) {
  const p = parseDateTime(s);
  if (!p || p.us % 1000 !== 0) return null;
  const d = new Date(0);
  d.setUTCFullYear(p.y, p.mo - 1, p.d);
  d.setUTCHours(p.h, p.mi, p.s, p.us / 1000);
  return d;
}

function textLiteral(conn, col, v) {
  if (v === null) return 'NULL';
  switch (col) {
    case 'f32':
    case 'f64':
      return String(v);
    case 'vb':
      return v.length === 0 ? "X''" : `X'${v.toString('hex')}'`;
    case 'vc':
    case 'tx':
    case 'js':
    case 'd':
    case 'dt':
    case 'ts':
      return conn.escape(v);
    default:
      return v; // integers, booleans and decimals as unquoted literals
  }
}

function binaryParam(A, col, v) {
  if (v === null) return null;
  switch (col) {
    case 'b':
      return v === '1';
    case 'i64':
      return A.bigint(v);
    case 'i8':
    case 'u8':
    case 'i16':
    case 'i32':
    case 'u32':
      return Number(v);
    case 'd':
    case 'dt':
    case 'ts':
      // A Date where it holds the value exactly; finer fractions go as text.
      return dateObject(col === 'd' ? `${v} 00:00:00` : v) || v;
    default:
      return v; // numbers, decimal text, strings, Buffers
  }
}

// canonical turns a value read back into the form typeRows uses, so that the
// comparison is exact; binary datetimes carry their microseconds, so their text is
// compared after padding the fraction to 6 digits.
function canonical(col, v, binary) {
  if (v === null || v === undefined) return v === undefined ? 'undefined' : null;
  switch (col) {
    case 'b':
      if (typeof v === 'boolean') return v ? '1' : '0';
      return typeof v === 'number' || typeof v === 'bigint' ? String(v) : v;
    case 'i8':
    case 'u8':
    case 'i16':
    case 'i32':
    case 'u32':
    case 'i64':
      return typeof v === 'number' || typeof v === 'bigint' ? String(v) : v;
    case 'js':
      try {
        return JSON.stringify(typeof v === 'string' ? JSON.parse(v) : v);
      } catch {
        return v;
      }
    case 'dt':
    case 'ts':
      if (binary && typeof v === 'string') {
        const m = /^(.{19})(?:\.(\d{1,6}))?$/.exec(v);
        if (m) return `${m[1]}.${(m[2] || '').padEnd(6, '0')}`;
      }
      return v;
    default:
      return v;
  }
}

function expected(col, v) {
  if (v === null) return null;
  if (col === 'js') return JSON.stringify(JSON.parse(v));
  return v;
}

async function errorOf(p) {
  try {
    await p;
  } catch (err) {
    return err;
  }
  return null;
}

function expectError(err, errno, sqlState) {
  if (!err) throw new Mismatch(`expected error ${errno}/${sqlState}, got success`);
  if (err.errno !== errno || err.sqlState !== sqlState) {
    throw new Mismatch(`expected error ${errno}/${sqlState}, got ${err.errno}/${err.sqlState}: ${String(err.message).split('\n')[0]}`);
  }
}

async function main() {
  const client = process.argv[2];
  if (!ADAPTERS[client]) {
    console.error(`usage: scenario.js ${Object.keys(ADAPTERS).join('|')}`);
    process.exit(2);
  }
  const A = require(ADAPTERS[client]);
  const t = new Tally(client);
  const env = {
    host: process.env.LAKESQL_HOST || '127.0.0.1',
    port: Number(process.env.LAKESQL_PORT || 3306),
    user: process.env.LAKESQL_USER || 'root',
    password: process.env.LAKESQL_PASSWORD || '',
    database: process.env.LAKESQL_DATABASE || 'lakesql',
  };
  console.log(`# ${client} options: ${JSON.stringify(A.options)}`);

  // 1. Connect.
  let conn = null;
  await t.check('connect', async () => {
    conn = await A.connect(env);
    const { rows } = await conn.query('SELECT 1 AS one');
    expect('SELECT 1: ', '1', String(rows[0].one));
  });
  await t.check('connect wrong password refused 1045/28000', async () => {
    const err = await errorOf(A.connect({ ...env, password: env.password + 'x' }).then((c) => c.close()));
    expectError(err, 1045, '28000');
  });
  if (!conn) {
    return t.summary();
  }

  const version = async (sink) => {
    const { rows } = await conn.query(`SHOW SINK STATUS ${sink}`);
    if (rows.length !== 1) throw new Mismatch(`SHOW SINK STATUS ${sink}: expected 1 row, got ${rows.length}`);
    const v = rows[0].Table_version;
    return v === null ? -1 : Number(String(v));
  };
  const lastEpoch = async (sink) => {
    const { rows } = await conn.query(`SHOW SINK STATUS ${sink}`);
    if (rows.length !== 1) throw new Mismatch(`SHOW SINK STATUS ${sink}: expected 1 row, got ${rows.length}`);
    const e = rows[0].Last_epoch;
    return e === null ? 0 : Number(String(e));
  };
  const count = async (sql, params) => {
    const { rows } = await conn.query(sql, params);
    return Number(String(Object.values(rows[0])[0]));
  };

  // 2. Sinks: `types` through the text statement, the others through the CALL
  // procedure prepared with ? arguments.
  await t.check('sink types (CREATE SINK, text)', async () => {
    await conn.query(`CREATE SINK types INTO DELTA 'lake/types' (${TYPES_DDL}) WITH (mode = 'upsert')`);
  });
  const callSinks = {
    txn: 'id BIGINT NOT NULL, v VARCHAR(32)',
    bulk: 'id BIGINT NOT NULL, v VARCHAR(32), x DOUBLE',
    conc: 'id BIGINT NOT NULL, conn INT',
  };
  for (const [name, cols] of Object.entries(callSinks)) {
    await t.check(`sink ${name} (CALL lakesql_create_sink, prepared)`, async () => {
      // conc counts one version per commit: no auto-compaction among them.
      await conn.execute('CALL lakesql_create_sink(?, ?, ?, ?, ?, ?)',
        [name, 'delta', `lake/${name}`, cols, null, name === 'conc' ? 'auto_compact = false' : null]);
      await version(name);
    });
  }

  // 3. Values: rows n written through the text protocol get id n, through the
  // binary one id 100+n; each is read back through both.
  const rows = typeRows();
  const written = { text: [], binary: [] };
  // A refused row costs only itself: the writes are checked as a whole, the
  // values of the rows that landed column by column.
  const writeAll = async (proto, offset, insert) => {
    const failures = [];
    for (const r of rows) {
      try {
        await insert(r);
        written[proto].push(r);
      } catch (err) {
        failures.push(`id ${offset + r.n}: error ${err.errno}/${err.sqlState}: ${String(err.message).split('\n')[0]}`);
      }
    }
    if (failures.length) throw new Mismatch(`expected every row inserted, got ${failures.join('; ')}`);
  };
  await t.check('values write text', () =>
    writeAll('text', 0, (r) => {
      const lits = COLUMNS.map((c) => (c === 'id' ? String(r.n) : textLiteral(conn, c, r[c])));
      return conn.query(`INSERT INTO types (${COLS_SQL}) VALUES (${lits.join(', ')})`);
    }));
  await t.check('values write binary', () =>
    writeAll('binary', 100, (r) => {
      const params = COLUMNS.map((c) => (c === 'id' ? A.bigint(100 + r.n) : binaryParam(A, c, r[c])));
      return conn.execute(`INSERT INTO types (${COLS_SQL}) VALUES (${PLACEHOLDERS})`, params);
    }));
  const read = { text: new Map(), binary: new Map() };
  await t.check('values read text', async () => {
    const { rows: got } = await conn.query(`SELECT ${COLS_SQL} FROM types WHERE id < 900 ORDER BY id`);
    for (const g of got) read.text.set(Number(String(g.id)), g);
  });
  await t.check('values read binary', async () => {
    const { rows: got } = await conn.execute(`SELECT ${COLS_SQL} FROM types WHERE id < ? ORDER BY id`, [900]);
    for (const g of got) read.binary.set(Number(String(g.id)), g);
  });
  for (const wp of ['text', 'binary']) {
    for (const rp of ['text', 'binary']) {
      if (written[wp].length === 0) {
        t.fail(`values write ${wp} read ${rp}`, 'expected rows to compare, got none written');
        continue;
      }
      const offset = wp === 'text' ? 0 : 100;
      await t.check(`values write ${wp} read ${rp}: rows present`, async () => {
        const missing = written[wp].filter((r) => !read[rp].has(offset + r.n)).map((r) => offset + r.n);
        if (written[wp].length === 0) throw new Mismatch('expected rows, got none written');
        if (missing.length) throw new Mismatch(`expected the ${written[wp].length} rows written, missing ids ${missing.join(',')}`);
      });
      for (const c of COLUMNS.slice(1)) {
        await t.check(`values write ${wp} read ${rp}: ${c}`, async () => {
          const bad = [];
          for (const r of written[wp]) {
            const g = read[rp].get(offset + r.n);
            if (!g) continue;
            const e = expected(c, r[c]);
            const v = canonical(c, g[c], rp === 'binary');
            if (show(e) !== show(v)) bad.push(`id ${offset + r.n}: expected ${show(e)}, got ${show(v)}`);
          }
          if (bad.length) throw new Mismatch(`${bad.length} of ${written[wp].length} rows differ: ${bad.slice(0, 4).join('; ')}${bad.length > 4 ? '; ...' : ''}`);
        });
      }
    }
  }

  // Out-of-range values: 1264/22003, and nothing inserted.
  const refusedText = [
    ['BIGINT 9223372036854775808', 'i64', '9223372036854775808'],
    ["BIGINT '99999999999999999999'", 'i64', "'99999999999999999999'"],
    ['BIGINT -9223372036854775809', 'i64', '-9223372036854775809'],
    ['BIGINT DOUBLE 9.3e18', 'i64', '9.3e18'],
    ['TINYINT UNSIGNED 256', 'u8', '256'],
    ['INT UNSIGNED -1', 'u32', '-1'],
  ];
  let rid = 900;
  for (const [what, col, lit] of refusedText) {
    const id = ++rid;
    await t.check(`refused text ${what} 1264/22003`, async () => {
      const err = await errorOf(conn.query(`INSERT INTO types (id, \`${col}\`) VALUES (${id}, ${lit})`));
      expectError(err, 1264, '22003');
      expect(`rows with id ${id}: `, 0, await count('SELECT count(*) FROM types WHERE id = ?', [id]));
    });
  }
  const refusedBinary = [
    ["BIGINT bound '9223372036854775808'", 'i64', '9223372036854775808'],
    ["BIGINT bound '99999999999999999999'", 'i64', '99999999999999999999'],
    ["BIGINT bound '-9223372036854775809'", 'i64', '-9223372036854775809'],
    ['BIGINT bound DOUBLE 9.3e18', 'i64', 9.3e18],
    ['TINYINT UNSIGNED bound 256', 'u8', 256],
    ['INT UNSIGNED bound -1', 'u32', -1],
    [`BIGINT bound uint64 18446744073709551615 as ${A.uint64Spelling}`, 'i64', A.uint64('18446744073709551615')],
  ];
  for (const [what, col, param] of refusedBinary) {
    const id = ++rid;
    await t.check(`refused binary ${what} 1264/22003`, async () => {
      const err = await errorOf(conn.execute(`INSERT INTO types (id, \`${col}\`) VALUES (?, ?)`, [A.bigint(id), param]));
      expectError(err, 1264, '22003');
      expect(`rows with id ${id}: `, 0, await count('SELECT count(*) FROM types WHERE id = ?', [id]));
    });
  }

  // 4. Transactions, with the client's own API, checked by table versions.
  const txnIds = async (ids) => count(`SELECT count(*) FROM txn WHERE id IN (${ids.join(',')})`);
  await t.check('txn commit: +1 version, both rows', async () => {
    const v0 = await version('txn');
    await conn.begin();
    await conn.query("INSERT INTO txn (id, v) VALUES (1, 'a')");
    await conn.query("INSERT INTO txn (id, v) VALUES (2, 'b')");
    await conn.commit();
    expect('version delta: ', 1, (await version('txn')) - v0);
    expect('rows 1,2: ', 2, await txnIds([1, 2]));
  });
  await t.check('txn rollback: +0 version, no rows', async () => {
    const v0 = await version('txn');
    await conn.begin();
    await conn.query("INSERT INTO txn (id, v) VALUES (3, 'c')");
    await conn.query("INSERT INTO txn (id, v) VALUES (4, 'd')");
    await conn.rollback();
    expect('version delta: ', 0, (await version('txn')) - v0);
    expect('rows 3,4: ', 0, await txnIds([3, 4]));
  });
  await t.check('txn autocommit: +1 version, the row', async () => {
    const v0 = await version('txn');
    await conn.query("INSERT INTO txn (id, v) VALUES (5, 'e')");
    expect('version delta: ', 1, (await version('txn')) - v0);
    expect('row 5: ', 1, await txnIds([5]));
  });
  await t.check('txn binary commit: +1 version, both rows', async () => {
    const v0 = await version('txn');
    await conn.begin();
    await conn.execute('INSERT INTO txn (id, v) VALUES (?, ?)', [A.bigint(6), 'f']);
    await conn.execute('INSERT INTO txn (id, v) VALUES (?, ?)', [A.bigint(7), 'g']);
    await conn.commit();
    expect('version delta: ', 1, (await version('txn')) - v0);
    expect('rows 6,7: ', 2, await txnIds([6, 7]));
  });
  await t.check('txn binary rollback: +0 version, no rows', async () => {
    const v0 = await version('txn');
    await conn.begin();
    await conn.execute('INSERT INTO txn (id, v) VALUES (?, ?)', [A.bigint(8), 'h']);
    await conn.execute('INSERT INTO txn (id, v) VALUES (?, ?)', [A.bigint(9), 'i']);
    await conn.rollback();
    expect('version delta: ', 0, (await version('txn')) - v0);
    expect('rows 8,9: ', 0, await txnIds([8, 9]));
  });

  // 5. Errors: code and SQLSTATE, and the connection still answers.
  const long = 'x'.repeat(65);
  const errorsText = [
    ['CREATE SINK of an existing name', 1050, '42S01', "CREATE SINK txn INTO DELTA 'lake/txn2' (id BIGINT NOT NULL)"],
    ['SELECT * FROM nosuch', 1146, '42S02', 'SELECT * FROM nosuch'],
    ['SELEC 1', 1064, '42000', 'SELEC 1'],
    ['NULL into txn.id', 1048, '23000', "INSERT INTO txn (id, v) VALUES (NULL, 'x')"],
    ["'x1.5' into types.dec", 1366, 'HY000', "INSERT INTO types (id, `dec`) VALUES (950, 'x1.5')"],
    ['65 characters into types.vc', 1406, '22001', `INSERT INTO types (id, vc) VALUES (951, '${long}')`],
    ["'{bad' into types.js", 3140, '22032', "INSERT INTO types (id, js) VALUES (952, '{bad')"],
  ];
  const errorsBinary = [
    ['CALL lakesql_create_sink of an existing name', 1050, '42S01', 'CALL lakesql_create_sink(?, ?, ?, ?)', ['txn', 'delta', 'lake/txn2', 'id BIGINT NOT NULL']],
    ['SELECT * FROM nosuch', 1146, '42S02', 'SELECT * FROM nosuch', []],
    ['SELEC 1', 1064, '42000', 'SELEC 1', []],
    ['NULL into txn.id', 1048, '23000', 'INSERT INTO txn (id, v) VALUES (?, ?)', [null, 'x']],
    ["'x1.5' into types.dec", 1366, 'HY000', 'INSERT INTO types (id, `dec`) VALUES (?, ?)', [A.bigint(953), 'x1.5']],
    ['65 characters into types.vc', 1406, '22001', 'INSERT INTO types (id, vc) VALUES (?, ?)', [A.bigint(954), long]],
    ["'{bad' into types.js", 3140, '22032', 'INSERT INTO types (id, js) VALUES (?, ?)', [A.bigint(955), '{bad']],
  ];
  const stillWorks = async () => {
    const { rows: r } = await conn.query('SELECT 2 AS two');
    expect('SELECT 2 after the error: ', '2', String(r[0].two));
  };
  for (const [what, errno, state, sql] of errorsText) {
    await t.check(`error text ${what} ${errno}/${state}`, async () => {
      expectError(await errorOf(conn.query(sql)), errno, state);
      await stillWorks();
    });
  }
  for (const [what, errno, state, sql, params] of errorsBinary) {
    await t.check(`error binary ${what} ${errno}/${state}`, async () => {
      expectError(await errorOf(conn.execute(sql, params)), errno, state);
      await stillWorks();
    });
  }

  // 6. Metadata: information_schema.COLUMNS, SHOW INDEX, and the result columns'
  // own definitions through both protocols.
  let isCols = new Map();
  await t.check('metadata information_schema.COLUMNS lists the 18 columns', async () => {
    const { rows: r } = await conn.query(
      "SELECT COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_KEY AS ckey FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'types' ORDER BY ORDINAL_POSITION",
      [env.database]
    );
    isCols = new Map(r.map((x) => [String(x.name), x]));
    expect('columns: ', COLUMNS.join(','), r.map((x) => String(x.name)).join(','));
  });
  for (const c of COLUMNS) {
    await t.check(`metadata COLUMN_TYPE ${c} ${DECLARED[c]}`, async () => {
      const x = isCols.get(c);
      expect('', DECLARED[c], x ? String(x.type) : null);
    });
  }
  await t.check('metadata id IS_NULLABLE NO, COLUMN_KEY PRI', async () => {
    const x = isCols.get('id');
    expect('id IS_NULLABLE/COLUMN_KEY: ', 'NO/PRI', x ? `${x.nullable}/${x.ckey}` : null);
  });
  await t.check('metadata SHOW INDEX: PRIMARY on id', async () => {
    const { rows: r } = await conn.query('SHOW INDEX FROM types');
    const keys = r.map((x) => `${x.Key_name}(${x.Column_name})`);
    expect('indexes: ', 'PRIMARY(id)', keys.join(','));
  });
  for (const proto of ['text', 'binary']) {
    let fields = new Map();
    await t.check(`metadata result columns ${proto}`, async () => {
      const res = proto === 'text'
        ? await conn.query(`SELECT ${COLS_SQL} FROM types WHERE id = 1`)
        : await conn.execute(`SELECT ${COLS_SQL} FROM types WHERE id = ?`, [A.bigint(1)]);
      fields = new Map(res.fields.map((f) => [f.name, f]));
      expect('columns: ', COLUMNS.join(','), res.fields.map((f) => f.name).join(','));
    });
    const f = (c) => fields.get(c) || {};
    await t.check(`metadata result ${proto} b is 1 wide`, async () => expect('b length: ', 1, f('b').length));
    await t.check(`metadata result ${proto} id NOT NULL and PRI`, async () =>
      expect('id flags: ', 'NOT_NULL PRI_KEY', [f('id').notNull ? 'NOT_NULL' : '', f('id').primaryKey ? 'PRI_KEY' : ''].filter(Boolean).join(' ')));
    await t.check(`metadata result ${proto} u8, u32 UNSIGNED`, async () =>
      expect('unsigned flags u8,u32: ', 'true,true', `${f('u8').unsigned},${f('u32').unsigned}`));
    await t.check(`metadata result ${proto} dt, ts 6 decimals`, async () =>
      expect('decimals dt,ts: ', '6,6', `${f('dt').decimals},${f('ts').decimals}`));
  }

  // 7. Bulk: 100,000 rows through the client's bulk path in one transaction.
  const N = 100000;
  await t.check('bulk 100000 rows in one transaction: +1 version', async () => {
    const v0 = await version('bulk');
    const data = [];
    for (let i = 0; i < N; i++) data.push([i, `v${i}`, i * 0.5]);
    await conn.begin();
    try {
      await conn.bulk('bulk', ['id', 'v', 'x'], data);
      await conn.commit();
    } catch (err) {
      await conn.rollback().catch(() => {});
      throw err;
    }
    expect('version delta: ', 1, (await version('bulk')) - v0);
  });
  await t.check('bulk count(*) 100000', async () => expect('', N, await count('SELECT count(*) FROM bulk')));
  await t.check('bulk count(DISTINCT id) 100000', async () => expect('', N, await count('SELECT count(DISTINCT id) FROM bulk')));

  // 8. Concurrency: 16 connections x 50 autocommit INSERTs.
  let v0 = 0;
  let e0 = 0;
  await t.check('conc 16 connections x 50 autocommit INSERTs acknowledged', async () => {
    v0 = await version('conc');
    e0 = await lastEpoch('conc');
    const conns = await Promise.all(Array.from({ length: 16 }, () => A.connect(env)));
    const errs = [];
    await Promise.all(conns.map(async (c, k) => {
      for (let i = 0; i < 50; i++) {
        try {
          await c.query(`INSERT INTO conc (id, conn) VALUES (${k * 50 + i}, ${k})`);
        } catch (err) {
          errs.push(`conn ${k} insert ${i}: ${err.errno}/${err.sqlState} ${String(err.message).split('\n')[0]}`);
        }
      }
      await c.close();
    }));
    if (errs.length) throw new Mismatch(`expected 800 OKs, got ${errs.length} errors: ${errs.slice(0, 3).join('; ')}`);
  });
  await t.check('conc count(*) 800', async () => expect('', 800, await count('SELECT count(*) FROM conc')));
  await t.check('conc count(DISTINCT id) 800', async () => expect('', 800, await count('SELECT count(DISTINCT id) FROM conc')));
  // Group commit: COMMITs that meet land as one version of consecutive
  // epochs, so each INSERT is an epoch, not a version.
  await t.check('conc +800 epochs', async () => expect('epoch delta: ', 800, (await lastEpoch('conc')) - e0));
  await t.check('conc +1..800 versions', async () => {
    const d = (await version('conc')) - v0;
    if (d < 1 || d > 800) throw new Mismatch(`version delta: expected 1..800, got ${d}`);
  });

  await conn.close().catch(() => {});
  return t.summary();
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.log(`FAIL scenario: ${err && err.stack}`);
    process.exit(1);
  }
);
