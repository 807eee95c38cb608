// The connectors' quoting lives in core/site: the health check of a rolling upgrade fills its command template with it too.
export { fillTemplate, shellCommand, shellQuote } from '../../../core/site/shell-quote';
