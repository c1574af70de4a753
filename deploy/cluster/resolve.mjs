// Name resolution of the cluster run (deploy/cluster/run.mjs), loaded into each gateway with
// `node --import`: a name ending in .cluster.test resolves to the addresses the JSON file
// CLUSTER_HOSTS lists for it ({ "<name>": ["127.0.0.12", ...] }), read at each lookup. The run
// rewrites the file as pods become ready or terminate, as a headless Service's DNS name lists its
// ready pods; the gateway learns a change only when it resolves the name again (its refresh, or a
// replica failing), as in Kubernetes. Other names resolve as usual.
import dns from "node:dns";
import { readFileSync } from "node:fs";

const SUFFIX = ".cluster.test";
const listed = (hostname) => {
  const addresses = JSON.parse(readFileSync(process.env.CLUSTER_HOSTS, "utf8"))[hostname] ?? [];
  if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname, syscall: "getaddrinfo" });
  return addresses.map((address) => ({ address, family: 4 }));
};

const lookup = dns.lookup;
dns.lookup = function (hostname, options, callback) {
  if (typeof options === "function") [options, callback] = [{}, options];
  if (typeof hostname !== "string" || !hostname.endsWith(SUFFIX)) return lookup.call(this, hostname, options, callback);
  let addresses;
  try {
    addresses = listed(hostname);
  } catch (error) {
    return process.nextTick(callback, error);
  }
  const all = typeof options === "object" && options?.all;
  if (all) process.nextTick(callback, null, addresses);
  else process.nextTick(callback, null, addresses[0].address, 4);
};

const promisesLookup = dns.promises.lookup;
dns.promises.lookup = async function (hostname, options) {
  if (typeof hostname !== "string" || !hostname.endsWith(SUFFIX)) return promisesLookup.call(this, hostname, options);
  const addresses = listed(hostname);
  return typeof options === "object" && options?.all ? addresses : addresses[0];
};
