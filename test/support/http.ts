/** Test bodies are checked by assertions, not by types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export const json = (res: Response): Promise<Json> => res.json() as Promise<Json>;
