// A path the request calls a folder, beside it ("an empty folder at /srv/receipts-2025", "a folder called
// receipts-2025"), is no file whose text a tool reads, writes or edits: the small model had been offered write_file
// beside create_directory for it, and chose between them by too narrow a lead to act. English words, so this
// adapter's; a capable model reads the request itself. A move, a search or a look at the folder may still take it.
import { FOLDER_WORDS, wordsOfName } from '../../domain/agent/catalog-fit.ts';
import type { ServerToolRef } from '../../domain/tools.ts';

// "folder at /srv/x", "directory /srv/x", "/srv/x folder": the word beside the path; "a folder called x": the thing made.
const FOLDER_BESIDE_PATH =
  /\b(?:folder|directory)\s+(?:(?:at|called|named)\s+)?\/[\w./-]*\w|\/[\w./-]*\w\s+(?:folder|directory)\b|\b(?:folder|directory)\s+(?:called|named)\s+["'“‘]?[\w-]+["'”’]?(?=[\s,.;:!?)]|$)/i;
const NAMES_FILE = /(?:^|[\s/])[\w-]+\.[a-z][a-z0-9]{0,4}(?=$|[\s,;:!?)'"])|\bfiles?\b/i;

/** Whether the text calls a path a folder, and names no file. */
export const callsFolder = (text: string) => !NAMES_FILE.test(text) && FOLDER_BESIDE_PATH.test(text);

/** Whether the tool reads, writes or edits a file's text ("read_text_file", "write_file", "edit_file"). */
export function worksOnFileText(ref: ServerToolRef): boolean {
  const names = wordsOfName(ref.tool);
  return names.some((w) => w === 'file' || w === 'files') && !names.some((w) => FOLDER_WORDS.has(w)) && ['read', 'write', 'edit'].includes(names[0] ?? '');
}
