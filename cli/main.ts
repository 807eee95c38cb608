import '../local/polyfills';
import { reportError, runRollout } from './program';
import { endQuietlyOnClosedPipe } from './quiet-pipe';

// An error no command caught (a library's callback, a database closing under us) ends the process with one line, as any other.
const lastResort = (err: unknown) => process.exit(reportError(err, process.argv.includes('--debug')));
process.on('uncaughtException', lastResort);
process.on('unhandledRejection', lastResort);
endQuietlyOnClosedPipe();

process.exitCode = await runRollout(process.argv.slice(2));
