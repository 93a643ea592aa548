// `npm run eval`'s options, checked before anything starts: a mistyped flag should cost a second,
// not the minute npm start takes to come up.
import { parseArgs } from 'node:util';
import { CATEGORIES, type Category } from './cases.ts';
import { CATALOGS, type Catalog, SCRIPTED_CATALOGS, type ScriptedCatalog } from './catalog.ts';

export const USAGE = `npm run eval [-- options]

  (none)               every case, on the README's catalog
  --catalog readme     the filesystem server as the README plugs it in: unlisted tools hidden (the default)
  --catalog full       the filesystem server with every tool offered, the unclassified ones external
  --catalog servers    (--provider scripted) files, memory, time and git, as scripts/eval/scripted/catalogs.json plugs them in
  --quick              the quick subset (every category; npm test runs it)
  --only CATEGORY      one category: ${CATEGORIES.join(', ')}
  --show               also print each failed run's plan, failure and unresolved items
  --provider P         the same against another default provider: local (no model; the bench's anchor) or embedded;
                       scripted: the scripted capable model as npm start's upstream, on the cases of
                       scripts/eval/scripted/ (--catalog readme or servers; both when not given). It must pass 100%
  --model FILE.gguf    the embedded provider on another GGUF model (EMBEDDED_MODEL_PATH)
  --set fresh          the fresh eval (issue 63): scripts/eval/fresh/cases.json, written without reading the planner,
                       over files, memory, time and git; the tuning half case by case, the held-out half in totals only
  --half H             with --set fresh: tuning, held_out, or both (the default)
  --strict             exit 1 when the target is not met (the summary's target_met)
  --help               this text`;

const PROVIDERS = ['local', 'embedded', 'scripted'];

export interface EvalOptions {
  catalog: Catalog;
  /** --provider scripted: the catalogs of scripts/eval/scripted/ it runs. */
  scriptedCatalogs: readonly ScriptedCatalog[];
  quick: boolean;
  only?: Category;
  show: boolean;
  provider?: string;
  model?: string;
  strict: boolean;
  help: boolean;
  /** --set fresh: the fresh eval's halves to run. */
  fresh?: readonly ('tuning' | 'held_out')[];
}

/** The options `argv` (without node and the script) gives; throws, naming the flag, on one it cannot take. */
export function parseEvalArgs(argv: string[]): EvalOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      catalog: { type: 'string' },
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      show: { type: 'boolean', default: false },
      provider: { type: 'string' },
      model: { type: 'string' },
      strict: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      set: { type: 'string' },
      half: { type: 'string' },
    },
  });
  const oneOf = <T extends string>(flag: string, value: string | undefined, allowed: readonly T[]) => {
    if (value !== undefined && !allowed.includes(value as T)) throw new Error(`--${flag} takes one of ${allowed.join(', ')}, not "${value}"`);
    return value as T | undefined;
  };
  const provider = oneOf('provider', values.provider, PROVIDERS);
  const set = oneOf('set', values.set, ['fresh'] as const);
  const half = oneOf('half', values.half, ['tuning', 'held_out', 'both'] as const);
  if (half && !set) throw new Error('--half goes with --set fresh');
  if (set === 'fresh') {
    if (provider === 'scripted') throw new Error('--set fresh has no scripts: it runs on local or embedded');
    return {
      catalog: 'readme',
      scriptedCatalogs: [],
      quick: values.quick,
      show: values.show,
      provider,
      strict: false,
      help: values.help,
      fresh: !half || half === 'both' ? ['tuning', 'held_out'] : [half],
    };
  }
  if (provider === 'scripted') {
    const only = oneOf('catalog', values.catalog, SCRIPTED_CATALOGS);
    return {
      catalog: 'readme',
      scriptedCatalogs: only ? [only] : SCRIPTED_CATALOGS,
      quick: values.quick,
      show: values.show,
      provider,
      strict: values.strict,
      help: values.help,
    };
  }
  return {
    scriptedCatalogs: [],
    catalog: oneOf('catalog', values.catalog, CATALOGS) ?? 'readme',
    quick: values.quick,
    only: oneOf('only', values.only, CATEGORIES),
    show: values.show,
    provider,
    model: values.model,
    strict: values.strict,
    help: values.help,
  };
}
