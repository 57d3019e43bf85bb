// Digital Bazaar's verifier-side libraries ship JavaScript without types.
declare module "@digitalbazaar/vc-status-list" {
  export function checkStatus(options: object): Promise<{ verified: boolean; error?: any }>
}
