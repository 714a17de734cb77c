import ipaddr from 'ipaddr.js';

/** One message per entry of a CIDR list that is neither `address/bits` nor a single address. */
export function cidrProblems(key: string, cidrs: readonly string[]): string[] {
  return cidrs.flatMap((cidr, index) =>
    ipaddr.isValidCIDR(cidr) || ipaddr.isValid(cidr)
      ? []
      : [`${key}[${index}]: "${cidr}" is not an address range like 10.0.0.0/8 or fd00::/8`],
  );
}
