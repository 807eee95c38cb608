import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { openSessions } from '../../local/open-runtime';
import { renderSessionHtml } from '../../control-plane/reports/session-html';
import { addTargetOptions, connectTarget, remoteTarget, type TargetOptions } from '../control-plane-target';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { unknownIdError } from '../unknown-id';

interface ReportOptions extends TargetOptions {
  html: string;
  dataDir?: string;
}

/** `rollout report ID --html FILE`: the session as one self-contained page (control-plane/reports/session-html.ts). */
export function registerReportCommand(program: Command): void {
  addTargetOptions(program.command('report'))
    .description(
      'Write an upgrade session as one self-contained HTML page: the timeline of nodes out of service against its cap (plotted with uPlot, inlined: it works offline) marked with its steps or waves, failures, stops, resumes and approvals; its messages; a per-rack summary; and the per-node table, sortable and filterable (`rollout serve` serves the same page at GET /sessions/{id}/report)',
    )
    .argument('<id>', 'upgrade id')
    .requiredOption('--html <file>', 'the page to write')
    .option('--data-dir <dir>', 'data directory of the sessions')
    .action(async (id: string, options: ReportOptions) => {
      const target = remoteTarget(options);
      if (target && options.dataDir) throw new CliError('give --data-dir or a control plane (--endpoint, --aws), not both', ExitCode.invalidInput);
      if (!target && !options.dataDir) throw new CliError('where are the sessions? give --data-dir DIR, --endpoint URL or --aws', ExitCode.invalidInput);
      const sessions = target ? await connectTarget(target) : await openSessions({ dataDir: options.dataDir! });
      try {
        const found = await sessions.session(id);
        if (found?.kind !== 'upgrade') throw unknownIdError(id, options);
        await writeFile(options.html, await renderSessionHtml(found.report));
        process.stdout.write(`wrote ${options.html}\n`);
      } finally {
        await sessions.close();
      }
    });
}
