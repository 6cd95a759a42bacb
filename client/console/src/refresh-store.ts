// Where the refresh token is kept between page loads and shared by the tabs: IndexedDB, read and
// written inside the refresh lock (session.ts). Not localStorage alone: Chromium gives each
// renderer process its own copy of localStorage and brings other tabs' writes over
// asynchronously, so a tab that takes the lock just after another tab rotated the token can still
// read the old one and present it again, which revokes the whole session. A transaction committed
// by one tab is seen by every IndexedDB transaction begun after it. localStorage keeps a mirror:
// it answers synchronously (is there a session to restore at load? which token does a logout
// send?), and a token placed there by hand (a script, a benchmark) is taken up while IndexedDB
// has none.
const DATABASE = 'trading-console';
const STORE = 'session';
const KEY = 'refresh-token';
export const MIRROR_KEY = 'trading-console.refresh-token';

let opened: Promise<IDBDatabase> | undefined;
const database = () =>
  (opened ??= new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB did not open'));
  }));

/** One request in its own transaction, resolved once the transaction has committed. */
const inTransaction = async <T>(mode: IDBTransactionMode, act: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> => {
  const db = await database();
  return new Promise<T>((resolve, reject) => {
    const transaction = db.transaction(STORE, mode);
    const request = act(transaction.objectStore(STORE));
    transaction.oncomplete = () => resolve(request.result);
    transaction.onerror = () => reject(transaction.error ?? new Error('IndexedDB transaction failed'));
    transaction.onabort = () => reject(transaction.error ?? new Error('IndexedDB transaction aborted'));
  });
};

const mirror = () => localStorage.getItem(MIRROR_KEY) ?? undefined;

export const refreshStore = {
  /** The mirror, synchronously: whether a session may be restored, and what a logout sends. */
  mirror,
  /** The token as the last tab to rotate it left it (the mirror where IndexedDB is empty or unavailable). */
  read: async (): Promise<string | undefined> => {
    try {
      const stored = await inTransaction('readonly', (store) => store.get(KEY) as IDBRequest<string | undefined>);
      return stored ?? mirror();
    } catch {
      return mirror();
    }
  },
  /** Keeps the token; resolves once every tab's next read sees it. */
  write: async (token: string): Promise<void> => {
    localStorage.setItem(MIRROR_KEY, token);
    await inTransaction('readwrite', (store) => store.put(token, KEY)).catch(() => undefined);
  },
  clear: async (): Promise<void> => {
    localStorage.removeItem(MIRROR_KEY);
    await inTransaction('readwrite', (store) => store.delete(KEY)).catch(() => undefined);
  },
};
