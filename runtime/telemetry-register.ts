// Imported first by each entry point (bin/start.ts, bin/api.ts, bin/worker.ts): ES modules are
// evaluated in import order, so tracing is set up before http and pg are first loaded
// (runtime/telemetry.ts).
import { startTelemetry } from './telemetry.ts';

startTelemetry();
