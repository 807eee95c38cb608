import '../engine/polyfills';
import { runRollout } from './program';

process.exitCode = await runRollout(process.argv.slice(2));
