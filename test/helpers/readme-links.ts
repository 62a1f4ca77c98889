/**
 * What the README points a reader at: its relative links, the files and folders of the repository it
 * names, its `npm run` scripts and its `npx oa example` commands, each with whether the text around it
 * says it is for a clone of the repository (a package user has only node_modules/oa-messaging).
 */

/** One thing the README points at. */
export interface Mention {
  /** The README line it is on (1-based). */
  line: number;
  kind: 'link' | 'path' | 'script' | 'example';
  /** The link target, the path, the script or the example's name. */
  target: string;
  /** The paragraph (or code block, or section) it is in says it is for a clone of the repository. */
  cloneOnly: boolean;
}

/** How the README says that something is for a clone of the repository, not for the package. */
const CLONE_LABEL = /clone of (?:this|the) repository|in this repository|in the repository only/i;
/** Sections that are about a clone as a whole. */
const CLONE_SECTIONS = ['## Development'];

/** Paths of the repository, as the README writes them (never inside a URL). */
const PATH =
  /(?<![\w./:-])((?:examples|docs|test|bench|src|dist|\.ci)\/[\w./*-]*|[A-Z][A-Z_]+\.md)(?![\w/])/g;
const LINK = /!?\[[^\]]*\]\(([^)\s]+)\)/g;
const SCRIPT = /\bnpm run ([\w:-]+)/g;
const EXAMPLE = /\bnpx oa example ([\w-]+)/g;

/** Groups the README's lines into paragraphs: a code block goes with the paragraph just before it. */
function paragraphs(lines: string[]): { start: number; end: number; section: string }[] {
  const groups: { start: number; end: number; section: string }[] = [];
  let section = '';
  let start = -1;
  let fenced = false;
  for (let i = 0; i <= lines.length; i++) {
    const line = lines[i];
    if (line?.startsWith('```')) fenced = !fenced;
    if (!fenced && line?.startsWith('## ')) section = line;
    // A blank line ends a paragraph unless a code block follows it (then they read as one).
    const ends = line === undefined || (!fenced && line.trim() === '' && !lines[i + 1]?.startsWith('```'));
    if (ends) {
      if (start >= 0) groups.push({ start, end: i, section });
      start = -1;
    } else if (start < 0) start = i;
  }
  return groups;
}

/** Everything the README points at, in order. */
export function readmeMentions(markdown: string): Mention[] {
  const lines = markdown.split('\n');
  const mentions: Mention[] = [];
  for (const { start, end, section } of paragraphs(lines)) {
    const text = lines.slice(start, end);
    // A label may run over a line break.
    const cloneOnly =
      CLONE_SECTIONS.includes(section) || CLONE_LABEL.test(text.join(' ').replace(/\s+/g, ' '));
    // A link's text may run over a line break: links are read from the paragraph as one text.
    const joined = text.join('\n');
    for (const match of joined.matchAll(LINK)) {
      const target = match[1] ?? '';
      // Other sites and the page's own headings are not files.
      if (/^(?:[a-z]+:|#)/.test(target)) continue;
      const line = start + joined.slice(0, match.index).split('\n').length;
      mentions.push({ line, kind: 'link', target, cloneOnly });
    }
    text.forEach((line, offset) => {
      const add = (kind: Mention['kind'], pattern: RegExp) => {
        for (const match of line.matchAll(pattern)) {
          mentions.push({ line: start + offset + 1, kind, target: match[1] ?? '', cloneOnly });
        }
      };
      add('path', PATH);
      add('script', SCRIPT);
      add('example', EXAMPLE);
    });
  }
  return mentions;
}
