/**
 * The links of a Markdown page and the anchors its headings make, as GitHub renders them: for the test
 * that every relative link of the README, CONTRIBUTING.md and the guides resolves, `#anchor` included.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** A link of a page: its target as written and the page line it is on (1-based). */
export interface Link {
  line: number;
  target: string;
}

/**
 * The page's lines outside fenced code blocks, with inline code spans blanked (a link or a heading in
 * code is not one); the line numbers stay those of the page.
 */
function proseLines(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence !== undefined) {
      if (opening?.startsWith(fence)) fence = undefined;
      return;
    }
    if (opening) {
      fence = opening;
      return;
    }
    out.push({
      line: index + 1,
      text: text.replace(/(`+)(?:(?!\1).)+\1/g, (span) => ' '.repeat(span.length)),
    });
  });
  return out;
}

/**
 * The anchor GitHub gives a heading's text: its rendered text (code spans, emphasis and links reduced
 * to their words), lowercased, with every character that is not a letter, a digit, a space, `-` or `_`
 * removed and each space made a `-`.
 */
export function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)/g, '')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: one per heading (a repeated one gets `-1`, `-2` ...), and HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;
  // A heading's text is read from the page as written: its inline code is part of it.
  const raw = markdown.split('\n');
  for (const { line, text } of proseLines(markdown)) {
    const heading = HEADING.test(text) ? HEADING.exec(raw[line - 1] ?? '') : null;
    if (heading) {
      const slug = githubSlug(heading[1] ?? '');
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id ?? '');
  }
  return anchors;
}

/** The inline links and images of a page (`[text](target)`, `![alt](target)`), outside code. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  // The page's prose as one text, code blanked and the lines kept, so that a link whose text runs over
  // a line break is found, on the line it starts.
  const prose: string[] = markdown.split('\n').map(() => '');
  for (const { line, text } of proseLines(markdown)) prose[line - 1] = text;
  const text = prose.join('\n');
  const starts = [...text.matchAll(/^/gm)].map((match) => match.index ?? 0);
  const LINK = /!?\[(?:[^\]\n]|\n(?!\n))*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
  for (const match of text.matchAll(LINK)) {
    const offset = match.index ?? 0;
    const line = starts.findLastIndex((start) => start <= offset) + 1;
    links.push({ line, target: match[1] ?? '' });
  }
  return links;
}

/** A link to another site or scheme (https:, mailto: ...), which this check leaves alone. */
const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/**
 * The broken relative links of `page` (a path relative to `root`), each as `page:line target: why`.
 * A link names a file or folder of the repository, relative to the page, with an optional `#anchor`
 * that must be a heading of the page it names (a Markdown page); `#anchor` alone is one of the page's
 * own. `generated` lists folders written by a build (ignored by git): a link into one is taken when
 * that build's output is not there, and checked when it is.
 */
export function brokenLinks(root: string, page: string, generated: string[] = []): string[] {
  const markdown = readFileSync(join(root, page), 'utf8');
  const broken: string[] = [];
  const anchorsByPage = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    let anchors = anchorsByPage.get(file);
    if (!anchors) {
      anchors = anchorsOf(readFileSync(join(root, file), 'utf8'));
      anchorsByPage.set(file, anchors);
    }
    return anchors;
  };
  for (const { line, target } of linksOf(markdown)) {
    if (isExternal(target)) continue;
    const fail = (why: string) => broken.push(`${page}:${line} ${target}: ${why}`);
    const [path = '', anchor] = target.split('#', 2) as [string, string | undefined];
    const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
    if (file.startsWith('..')) {
      fail('outside the repository');
      continue;
    }
    if (!existsSync(join(root, file))) {
      const built = generated.find((folder) => file.startsWith(`${folder}/`));
      if (!built || existsSync(join(root, built))) fail('no such file');
      continue;
    }
    if (anchor === undefined) continue;
    if (!file.endsWith('.md') || statSync(join(root, file)).isDirectory()) {
      fail('an anchor in a file that is not a Markdown page');
      continue;
    }
    if (!anchorsIn(file).has(anchor)) fail(`no heading of ${file} makes #${anchor}`);
  }
  return broken;
}
