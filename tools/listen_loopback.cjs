// Keeps the MCP conformance harness on loopback. tools/conformance.py preloads this file into every
// harness process (NODE_OPTIONS=--require <this file>): the harness's mock servers call listen(0) with
// no host, which would bind every interface, so host-less (or wildcard-host) net.Server#listen() calls
// are bound to 127.0.0.1 instead.
//
// Subtle part: once a host is given, node resolves it with dns.lookup() and binds in the lookup
// callback, which normally runs on a later tick. The harness reads server.address() right after
// listen() returns, so it would see null. While the patched listen() runs we therefore answer
// lookups of IP literals synchronously, which keeps the bind synchronous like the host-less call.
'use strict';

const net = require('node:net');
const dns = require('node:dns');

const LOOPBACK = '127.0.0.1';
const WILDCARDS = new Set(['', '0.0.0.0', '::', '0:0:0:0:0:0:0:0']);
const originalListen = net.Server.prototype.listen;

function immediateLookup(originalLookup) {
  return function lookup(hostname, options, callback) {
    if (typeof options === 'function') {
      callback = options;
      options = {};
    }
    const family = net.isIP(String(hostname));
    if (family === 0) return originalLookup.call(dns, hostname, options, callback);
    if (options !== null && typeof options === 'object' && options.all) {
      callback(null, [{ address: hostname, family }]);
    } else {
      callback(null, hostname, family);
    }
  };
}

function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
}

function pinHost(args) {
  const first = args[0];
  if (first === undefined || first === null || typeof first === 'function') {
    return [0, LOOPBACK, ...args.slice(first === undefined || first === null ? 1 : 0)];
  }
  if (isPort(first)) {
    if (typeof args[1] === 'string') {
      return WILDCARDS.has(args[1]) ? [first, LOOPBACK, ...args.slice(2)] : args;
    }
    return [first, LOOPBACK, ...args.slice(1)];
  }
  if (typeof first === 'object') {
    const isHandle = '_handle' in first || 'handle' in first || 'fd' in first;
    if (isHandle || first.path !== undefined) return args;
    if (first.host === undefined || first.host === null || WILDCARDS.has(first.host)) {
      return [{ ...first, host: LOOPBACK }, ...args.slice(1)];
    }
  }
  return args; // a pipe path or an explicit host
}

net.Server.prototype.listen = function listen(...args) {
  const originalLookup = dns.lookup;
  dns.lookup = immediateLookup(originalLookup);
  try {
    return originalListen.apply(this, pinHost(args));
  } finally {
    dns.lookup = originalLookup;
  }
};
