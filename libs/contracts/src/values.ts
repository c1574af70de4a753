/** The ISO 4217 codes the runtime knows (EUR, SEK, ...), written as the standard writes them. */
const CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

/** Whether `code` is an ISO 4217 currency code: the contract's rule for every currency field. */
export const isCurrencyCode = (code: string): boolean => CURRENCIES.has(code);
