/**
 * The token a connector sends with its requests: a fixed string (a CLI run, a test), or one read
 * from its secret that is kept for SECRET_MAX_AGE_SECONDS and read again after that, and at once
 * when the site refuses it (401). So a warm Lambda does not keep a token that was rotated out.
 */
export interface TokenSource {
  current(): Promise<string>;
  /** The site answered 401 with the current token: returns whether the next current() reads it afresh (worth one retry). */
  refused(): boolean;
}

export type Token = string | TokenSource;

/** How long a token read from Secrets Manager is used before it is read again (Powertools' maxAge). */
export const SECRET_MAX_AGE_SECONDS = 300;

export function tokenSource(token: Token): TokenSource {
  return typeof token === 'string' ? { current: async () => token, refused: () => false } : token;
}

/** A secret's token through `read`, which keeps it for SECRET_MAX_AGE_SECONDS unless told to fetch it afresh. */
export function secretTokenSource(read: (forceFetch: boolean) => Promise<string>): TokenSource {
  let forceFetch = false;
  return {
    async current() {
      const value = await read(forceFetch);
      forceFetch = false;
      return value;
    },
    refused() {
      forceFetch = true;
      return true;
    },
  };
}
