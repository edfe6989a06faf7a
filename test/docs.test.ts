/**
 * The documentation stays navigable (issue "Docs and house"): generated pages match what generates
 * them, and no relative link between Markdown pages is dead — its file exists and, when it names an
 * anchor, the target page has that heading (GitHub's anchor rules).
 */
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HTTP_API_PAGE, renderHttpApiPage } from '../apps/api/src/docs/http-api-page.ts';
import { newestReport, renderReadme } from '../bench/render-readme.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Fragments of generated pages: their links are relative to the page they end up in. */
const FRAGMENTS = new Set([fileURLToPath(new URL('../apps/api/src/docs/http-api-intro.md', import.meta.url))]);

/** Every Markdown page of the repository outside node_modules, .git and generated data. */
async function markdownFiles(dir = ROOT): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (['node_modules', '.git', '.vitest-data', 'data'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await markdownFiles(path)));
    else if (entry.name.endsWith('.md') && !FRAGMENTS.has(path)) found.push(path);
  }
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown text's headings (outside code fences), duplicates numbered as GitHub does. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!match) continue;
    const base = anchorOf(match[1]!);
    const seen = counts.get(base) ?? 0;
    counts.set(base, seen + 1);
    anchors.add(seen === 0 ? base : `${base}-${seen}`);
  }
  return anchors;
}

/** The relative link targets of a Markdown text (outside code fences and inline code). */
function linksOf(text: string): string[] {
  const links: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

describe('documentation', () => {
  it('has docs/reference/http-api.md as `npm run docs` generates it', async () => {
    expect(await readFile(HTTP_API_PAGE, 'utf8')).toBe(await renderHttpApiPage());
  });

  it('has the figures of bench/README.md rendered from the newest suite report (npm run bench:readme)', async () => {
    const results = fileURLToPath(new URL('../bench/results/', import.meta.url));
    const readme = await readFile(join(ROOT, 'bench/README.md'), 'utf8');
    const { file, report } = newestReport(results);
    expect(readme).toBe(renderReadme(readme, file, report));
  });

  it('has no dead relative link or anchor between its pages', async () => {
    const files = await markdownFiles();
    const texts = new Map(await Promise.all(files.map(async (file) => [file, await readFile(file, 'utf8')] as const)));
    const dead: string[] = [];
    for (const [file, text] of texts) {
      for (const link of linksOf(text)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        let targetText = texts.get(target);
        if (targetText === undefined) {
          try {
            targetText = await readFile(target, 'utf8');
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'EISDIR') continue;
            dead.push(`${relative(ROOT, file)}: ${link} (no such file)`);
            continue;
          }
        }
        if (anchor && target.endsWith('.md') && !anchorsOf(targetText).has(anchor)) dead.push(`${relative(ROOT, file)}: ${link} (no such heading)`);
      }
    }
    expect(dead).toEqual([]);
  });
});
