/**
 * Where a bench script's servers listen: from a random start in 10,000-18,999, counting up. Below
 * Linux's ephemeral range (32,768-60,999 here: /proc/sys/net/ipv4/ip_local_port_range), where an
 * outgoing connection or a listener on port 0 (the gateway's admin listener) may take a port a
 * script chose before its server binds it (a full run failed so: EADDRINUSE); and below the
 * tests' 20,000-32,000 (test/support/process.ts), so a bench beside the tests never meets them.
 */
export const firstBenchPort = (): number => 10_000 + Math.floor(Math.random() * 9_000)
