import dns from 'node:dns';
import type http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { Agent, buildConnector } from 'undici';
import type { OutboundConfig } from '../core/config.js';
import type { PermanentError } from '../core/errors.js';
import { embeddedIPv4, formatIp, hostName, inRange, type IpBytes, parseIp, specialKind } from '../core/ip.js';
import { type ForwardProxy, startForwardProxy } from './proxy.js';
import { isAddressRefusal, refusal, refused } from './refusal.js';

export { ADDRESS_NOT_ALLOWED, asValidationError, isAddressRefusal, refused } from './refusal.js';

/**
 * The outbound-address guard: the one rule for every URL a user supplies (recipe posts and their pictures,
 * transcription URLs, git-host remotes, push endpoints). Such a URL may reach the public internet only: a host that
 * is, or resolves to, a loopback, private, link-local, shared (CGNAT), multicast, unspecified, reserved or cloud
 * metadata address is refused, unless OUTBOUND_ALLOW names its range, address or host name (an operator's LAN).
 *
 * The check is made where the connection is made, on the address connected to: the `lookup` every connection uses
 * resolves the name and checks every address it answers, and connections to address literals are checked before
 * they are opened. So a redirect, or a DNS answer that changes between a check and the connection (rebinding),
 * reaches nothing the rule refuses. Requests made in-process go through `dispatcher` (undici) or `httpsAgent`;
 * child processes (git, yt-dlp) go through `proxyUrl()`, a forward proxy that applies the same rule.
 *
 * Addresses the operator configures (the language model, the recipe manager, the ASR backend, embedding servers)
 * are trusted and do not go through the guard.
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** How names become addresses; the system's resolver (getaddrinfo: /etc/hosts, then DNS) unless a test injects one. */
export type Resolver = (name: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (name) => (await dns.promises.lookup(name, { all: true, verbatim: true })) as ResolvedAddress[];

const HINT = 'user-supplied URLs may only reach public addresses (OUTBOUND_ALLOW lets an operator allow a host or range)';

function notFound(host: string): Error {
  return Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND', hostname: host });
}

export class OutboundGuard {
  private undiciAgent: Agent | undefined;
  private readonly httpsAgents: https.Agent[] = [];
  private forwardProxy: Promise<ForwardProxy> | undefined;

  constructor(
    private readonly policy: OutboundConfig,
    private readonly resolver: Resolver = systemResolver,
  ) {}

  /** OUTBOUND_ALLOW names this host (exactly, or by a `*.` wildcard). */
  hostAllowed(host: string): boolean {
    const name = hostName(host);
    return this.policy.allowHosts.some((h) => h === name || (h.startsWith('*.') && name.endsWith(h.slice(1))));
  }

  /** What kind of refused address this is (`loopback`, `private`, ...), or undefined when it may be reached. */
  refusal(address: IpBytes): string | undefined {
    const kind = specialKind(address);
    if (!kind) return undefined;
    const v4 = embeddedIPv4(address);
    const allowed = this.policy.allowRanges.some((r) => inRange(address, r) || (v4 !== undefined && inRange(v4, r)));
    return allowed ? undefined : kind;
  }

  /** For a host that is an address literal the rule refuses, the refusal (connections to literals skip lookups). */
  literalRefusal(host: string): PermanentError | undefined {
    const literal = parseIp(host);
    const kind = literal && this.refusal(literal);
    return kind ? refusal(`${host} is a ${kind} address; ${HINT}`) : undefined;
  }

  /**
   * The addresses `host` may be reached at. An address literal (in any form a resolver accepts) is checked as it
   * is; a name is resolved and every address it has is checked: one refused address refuses the host, since the
   * connection could go to any of them. Throws the refusal (code ADDRESS_NOT_ALLOWED), or the resolver's error (ENOTFOUND, ...).
   */
  async resolve(host: string): Promise<ResolvedAddress[]> {
    const literal = parseIp(host);
    if (literal) {
      const err = this.literalRefusal(host);
      if (err) throw err;
      return [{ address: formatIp(literal), family: literal.length === 4 ? 4 : 6 }];
    }
    const name = hostName(host);
    const found = await this.resolver(name);
    if (!found.length) throw notFound(host);
    if (this.hostAllowed(name)) return found;
    for (const a of found) {
      const bytes = parseIp(a.address);
      const kind = bytes ? this.refusal(bytes) : 'unreadable';
      if (kind) throw refusal(`${host} resolves to a ${kind} address; ${HINT}`);
    }
    return found;
  }

  /**
   * Refuses a URL whose host is, or resolves to, an address the rule refuses, before any tool is started on it
   * (`what` names it in the message: "The post"). A name that cannot be resolved now is not refused here (the tool
   * reports that); its connections are checked anyway.
   */
  async checkUrl(url: string | URL, what: string): Promise<void> {
    const u = typeof url === 'string' ? new URL(url) : url;
    try {
      await this.resolve(u.hostname);
    } catch (err) {
      if (isAddressRefusal(err)) throw refused(what, err);
    }
  }

  /** A `net` lookup that only answers addresses the rule allows (Node's signature: `all` and `family` honoured). */
  readonly lookup: net.LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const list = family ? found.filter((a) => a.family === family) : found;
        if (!list.length) return callback(notFound(hostname) as NodeJS.ErrnoException, '', 0);
        if (options.all) callback(null, list);
        else callback(null, list[0]!.address, list[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };

  /**
   * For undici's `fetch`: every connection it opens, the first and each redirect's, is checked. Names go through
   * `lookup`; address literals (which Node connects to without a lookup) are checked here.
   */
  get dispatcher(): Agent {
    if (!this.undiciAgent) {
      const connect = buildConnector({ lookup: this.lookup });
      this.undiciAgent = new Agent({
        connect: (opts, callback) => {
          const err = this.literalRefusal(opts.hostname);
          if (err) return callback(err, null);
          return connect(opts, callback);
        },
      });
    }
    return this.undiciAgent;
  }

  /** An https.Agent for libraries that take one (web push), checking every connection like `dispatcher`. */
  httpsAgent(options: https.AgentOptions = {}): https.Agent {
    const agent = new GuardedHttpsAgent(this, options);
    this.httpsAgents.push(agent);
    return agent;
  }

  /**
   * The forward proxy child processes are pointed at (`http://user:pass@127.0.0.1:port`, started on first use):
   * CONNECT and plain HTTP requests, each to an address the rule allows.
   */
  async proxyUrl(): Promise<string> {
    if (!this.forwardProxy) {
      const starting = startForwardProxy(this);
      starting.catch(() => (this.forwardProxy = undefined));
      this.forwardProxy = starting;
    }
    return (await this.forwardProxy).url;
  }

  async close(): Promise<void> {
    const proxy = this.forwardProxy;
    this.forwardProxy = undefined;
    for (const a of this.httpsAgents.splice(0)) a.destroy();
    const agent = this.undiciAgent;
    this.undiciAgent = undefined;
    await Promise.all([agent?.close(), proxy?.then((p) => p.close(), () => undefined)]);
  }
}

/** https.Agent whose sockets go through the guard: names by its lookup, address literals checked here. */
class GuardedHttpsAgent extends https.Agent {
  constructor(
    private readonly guard: OutboundGuard,
    options: https.AgentOptions,
  ) {
    super({ ...options, lookup: guard.lookup });
  }

  override createConnection(options: http.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const err = this.guard.literalRefusal(options.host ?? options.hostname ?? '');
    if (err) {
      process.nextTick(() => callback?.(err, undefined as unknown as Duplex));
      return undefined;
    }
    return super.createConnection(options, callback);
  }
}

const guards = new WeakMap<OutboundConfig, OutboundGuard>();

/** The guard of a configuration (one per process and configuration, so its agents and proxy are shared). */
export function outboundGuard(config: { outbound: OutboundConfig }): OutboundGuard {
  let g = guards.get(config.outbound);
  if (!g) {
    g = new OutboundGuard(config.outbound);
    guards.set(config.outbound, g);
  }
  return g;
}

/** Closes the guard's agents and proxy (shutdown). */
export async function closeOutbound(config: { outbound: OutboundConfig }): Promise<void> {
  const g = guards.get(config.outbound);
  guards.delete(config.outbound);
  await g?.close();
}
