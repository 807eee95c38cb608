import { siteProfileJsonSchema } from '../../core/site/site-profile';
import { siteDefinitionSchema } from '../../simulator/site-file';
import { inputJsonSchema, type SchemaSection } from './schema-reference';

/** The site file (a simulated site, or a file inventory) and the site profile (a real site's services). */
export function siteSections(): SchemaSection[] {
  return [
    {
      heading: 'Site file',
      intro:
        "A site as a file (YAML or JSON), for `--site FILE`: its nodes, groups, boot templates, releases and environments; a simulated site also its Slurm, timing, workload and faults. A file inventory (a site profile's `inventory: {type: file}`) reads the inventory part and passes over the simulation keys.",
      source: '`siteDefinitionSchema` (simulator/site-file.ts), whose inventory part is core/site-file/site-definition.ts',
      schema: inputJsonSchema(siteDefinitionSchema),
    },
    {
      heading: 'Site profile',
      intro:
        "A real site's services (JSON or YAML), for `--site-config FILE`: the workload manager, the boot service, the inventory, the provisioner, task execution, command transports. schemas/site-profile.schema.json is its JSON Schema.",
      source: '`siteProfileSchema` (core/site/site-profile.ts)',
      schema: siteProfileJsonSchema(),
    },
  ];
}
