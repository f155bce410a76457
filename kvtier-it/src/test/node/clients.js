// ioredis 5 and node-redis 5 doing what applications do, against one server; prints one JSON object of what every
// step returned, so that the same run against redis-server and against kvtier can be compared key for key.
// Usage: node clients.js <port>
'use strict';
const crypto = require('crypto');
const Redis = require('ioredis');
const { createClient } = require('redis');

const port = Number(process.argv[2]);
const big = crypto.createHash('sha256').update('kvtier').digest().toString('hex').repeat(32768); // 2 MiB

function sha1(b) {
  return b === null ? null : crypto.createHash('sha1').update(b).digest('hex');
}

/** ioredis answers a transaction or pipeline as [error, value] pairs: errors as their text, for comparison. */
function plain(v) {
  if (v instanceof Error) {
    return { error: v.constructor.name, text: v.message };
  }
  return Array.isArray(v) ? v.map(plain) : v;
}

async function step(out, name, fn) {
  try {
    out[name] = { ok: plain(await fn()) };
  } catch (e) {
    out[name] = { error: e.constructor.name, text: String(e.message).split('\n')[0] };
  }
}

async function ioredis() {
  const out = {};
  const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  const other = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  await step(out, 'connect', async () => { await r.connect(); await other.connect(); return r.status; });
  await step(out, 'set_get', async () => [await r.set('io:a', 'v1'), await r.get('io:a'), await r.get('io:none')]);
  await step(out, 'set_options', async () => [await r.set('io:a', 'v2', 'XX', 'GET'), await r.set('io:a', 'x', 'NX'),
    await r.set('io:ttl', 'v', 'EX', 100), await r.ttl('io:ttl'), (await r.pttl('io:ttl')) > 99000]);
  await step(out, 'binary', async () => {
    await r.set('io:big', Buffer.from(big));
    return [sha1(await r.getBuffer('io:big')), await r.strlen('io:big'), await r.getrange('io:big', 0, 9)];
  });
  await step(out, 'multi_keys', async () => [await r.mset('io:m1', '1', 'io:m2', '2'),
    await r.mget('io:m1', 'io:m2', 'io:none'), await r.exists('io:m1', 'io:m2', 'io:none'),
    await r.del('io:m1', 'io:none'), await r.getdel('io:m2'), await r.getex('io:a', 'PX', 5000)]);
  await step(out, 'transaction', async () => await r.multi().set('io:t', '1').get('io:t').strlen('io:t').exec());
  await step(out, 'transaction_error', async () => await r.multi().set('io:t', '1').set('io:t', '2', 'XX', 'NX')
    .get('io:t').exec());
  await step(out, 'watch_broken', async () => {
    await r.watch('io:w');
    await other.set('io:w', 'changed');
    return await r.multi().set('io:w', 'mine').exec();
  });
  await step(out, 'pipeline', async () => await r.pipeline().set('io:p', '1').get('io:p').del('io:p').exec());
  await step(out, 'scan', async () => {
    const keys = [];
    for await (const batch of r.scanStream({ match: 'io:*', count: 100 })) {
      keys.push(...batch);
    }
    return keys.sort();
  });
  await step(out, 'keys', async () => (await r.keys('io:*')).sort());
  await step(out, 'role', async () => /role:master/.test(await r.info('replication')));
  await step(out, 'client_name', async () => [await r.client('SETNAME', 'ioredis-it'), await r.client('GETNAME')]);
  await step(out, 'unknown', async () => await r.call('NOSUCHCOMMAND', 'x'));
  await step(out, 'cleanup', async () => await r.del('io:a', 'io:ttl', 'io:big', 'io:t', 'io:w'));
  await step(out, 'quit', async () => [await r.quit(), await other.quit()]);
  return out;
}

async function nodeRedis() {
  const out = {};
  const r = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
  const other = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
  r.on('error', () => {});
  other.on('error', () => {});
  await step(out, 'connect', async () => { await r.connect(); await other.connect(); return r.isReady; });
  await step(out, 'set_get', async () => [await r.set('nr:a', 'v1'), await r.get('nr:a'), await r.get('nr:none')]);
  await step(out, 'set_options', async () => [await r.set('nr:a', 'v2', { XX: true, GET: true }),
    await r.set('nr:a', 'x', { NX: true }), await r.set('nr:ttl', 'v', { EX: 100 }), await r.ttl('nr:ttl'),
    (await r.pTTL('nr:ttl')) > 99000]);
  await step(out, 'binary', async () => {
    await r.set('nr:big', Buffer.from(big));
    const back = await r.withTypeMapping({ [36]: Buffer }).get('nr:big');
    return [sha1(back), await r.strLen('nr:big'), await r.getRange('nr:big', 0, 9)];
  });
  await step(out, 'multi_keys', async () => [await r.mSet({ 'nr:m1': '1', 'nr:m2': '2' }),
    await r.mGet(['nr:m1', 'nr:m2', 'nr:none']), await r.exists(['nr:m1', 'nr:m2', 'nr:none']),
    await r.del(['nr:m1', 'nr:none']), await r.getDel('nr:m2'), await r.getEx('nr:a', { PX: 5000 })]);
  await step(out, 'transaction', async () => await r.multi().set('nr:t', '1').get('nr:t').strLen('nr:t').exec());
  await step(out, 'transaction_error', async () => await r.multi().set('nr:t', '1')
    .addCommand(['SET', 'nr:t', '2', 'XX', 'NX']).get('nr:t').exec());
  await step(out, 'watch_broken', async () => {
    const iso = r.duplicate(); // node-redis 5: WATCH needs a connection of its own
    iso.on('error', () => {});
    await iso.connect();
    try {
      await iso.watch('nr:w');
      await other.set('nr:w', 'changed');
      return await iso.multi().set('nr:w', 'mine').exec();
    } finally {
      await iso.quit();
    }
  });
  await step(out, 'pipeline', async () => await r.multi().set('nr:p', '1').get('nr:p').del('nr:p').execAsPipeline());
  await step(out, 'scan', async () => {
    const keys = [];
    for await (const batch of r.scanIterator({ MATCH: 'nr:*', COUNT: 100 })) {
      keys.push(...(Array.isArray(batch) ? batch : [batch]));
    }
    return keys.sort();
  });
  await step(out, 'keys', async () => (await r.keys('nr:*')).sort());
  await step(out, 'role', async () => /role:master/.test(await r.info('replication')));
  await step(out, 'client_name', async () => [await r.clientSetName('node-redis-it'), await r.clientGetName()]);
  await step(out, 'unknown', async () => await r.sendCommand(['NOSUCHCOMMAND', 'x']));
  await step(out, 'cleanup', async () => await r.del(['nr:a', 'nr:ttl', 'nr:big', 'nr:t', 'nr:w']));
  await step(out, 'quit', async () => { await r.quit(); await other.quit(); return true; });
  return out;
}

(async () => {
  const result = { ioredis: await ioredis(), node_redis: await nodeRedis() };
  console.log(JSON.stringify(result));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
