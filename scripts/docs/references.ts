import { programSpec } from '../../cli/program-spec';
import { cliReference } from './cli-reference';
import { anchor, code, document, generatedNotice } from './markdown';
import { controlInputsMarkdown, requestSections } from './requests-reference';
import { restApiReference } from './rest-api-reference';
import { schemaSection, type SchemaSection } from './schema-reference';
import { siteSections } from './site-file-reference';

/** The folder of the generated references, relative to the repository's root. */
export const REFERENCE_DIR = 'docs/reference';

export interface References {
  /** File name (in REFERENCE_DIR) → its text. */
  files: Map<string, string>;
  /** Every option, argument, field or route the code leaves without a description (`file: where`). */
  undescribed: string[];
  counts: { commands: number; options: number; requestFields: number; siteFields: number; routes: number };
}

/**
 * Every generated reference, from the code that defines it: the CLI's command tree, the zod schemas
 * of the requests and the site, the OpenAPI document. Pure of the machine: nothing here reads the
 * terminal, the environment, the clock or the working directory.
 */
export function generateReferences(): References {
  const cli = cliReference(programSpec());
  const requests = schemaFile(
    'Workflow requests',
    'the zod schemas of the workflow inputs',
    'What each workflow takes as its input, field by field: the request `rollout` builds from its flags, the REST API takes as a body and the Step Functions console takes as an execution input.',
    requestSections(),
    [controlInputsMarkdown()],
  );
  const site = schemaFile(
    'Site file and site profile',
    'the zod schemas of the site file and the site profile',
    'The keys of a site file (`--site FILE`) and of a site profile (`--site-config FILE`), field by field.',
    siteSections(),
  );
  const rest = restApiReference();
  const files = new Map<string, string>([
    ['README.md', index()],
    ['cli.md', cli.markdown],
    ['requests.md', requests.markdown],
    ['site-file.md', site.markdown],
    ['rest-api.md', rest.markdown],
  ]);
  return {
    files,
    undescribed: [
      ...cli.undescribed.map((where) => `cli.md: ${where}`),
      ...requests.undescribed.map((where) => `requests.md: ${where}`),
      ...site.undescribed.map((where) => `site-file.md: ${where}`),
      ...rest.undescribed.map((where) => `rest-api.md: ${where}`),
    ],
    counts: { commands: cli.commands, options: cli.options, requestFields: requests.fields, siteFields: site.fields, routes: rest.routes },
  };
}

function schemaFile(
  title: string,
  source: string,
  intro: string,
  sections: SchemaSection[],
  more: string[] = [],
): { markdown: string; undescribed: string[]; fields: number } {
  const made = sections.map(schemaSection);
  const headings = [...sections.map((section) => section.heading), ...more.map((block) => block.split('\n')[0]!.replace(/^## /, ''))];
  const contents = headings.map((heading) => `- [${heading}](#${anchor(heading)})`).join('\n');
  const markdown = document([
    generatedNotice(source),
    `# ${title}`,
    intro,
    `Each table is one object: its fields, their type, whether they are required, their default (a field with a default may be left out), their constraints and what they mean.`,
    contents,
    ...made.map((section) => section.markdown),
    ...more,
  ]);
  return { markdown, undescribed: made.flatMap((section) => section.undescribed), fields: made.reduce((sum, section) => sum + section.fields, 0) };
}

function index(): string {
  return document([
    generatedNotice('the code (scripts/docs/)'),
    '# Reference',
    `These files are generated from the code that defines what they describe, by ${code('npm run docs:generate')}: do not edit them by hand. Change the description in the code (a commander option, a zod schema's \`.describe()\`, an OpenAPI route) and run the script again; ${code('test/docs/references.test.ts')} fails when a committed file differs from what the script generates, or when an option or field has no description.`,
    [
      '- [cli.md](cli.md): every `rollout` command and subcommand, its usage, arguments and options; the exit statuses.',
      '- [requests.md](requests.md): the workflow requests: the rolling upgrade request, the group deployment request and strategy, the task run request and task graph, the environment upgrade request.',
      '- [site-file.md](site-file.md): the site file (`--site`) and the site profile (`--site-config`).',
      '- [rest-api.md](rest-api.md): every REST route with its request and responses, the bodies they name, and the status events.',
    ].join('\n'),
  ]);
}
