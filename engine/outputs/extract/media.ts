/**
 * Media URLs of a page, absolute and deduplicated: images (lazy-loading attributes and `<picture>`
 * sources included, tracking pixels and inline `data:` images left out), audio and video files and
 * players, and the favicon.
 */
import { type HTMLElement, imageSource, largestSrcset } from '../dom';
import { OrderedSet, type Page, isWebUrl } from './page';

const AUDIO_FILE = /\.(?:mp3|m4a|aac|oga|ogg|opus|wav|flac|weba)(?:[?#]|$)/i;
const VIDEO_FILE = /\.(?:mp4|m4v|webm|ogv|mov|mkv|avi|m3u8|mpd)(?:[?#]|$)/i;
/** Embedded players: an `<iframe>` from these hosts is a video. */
const VIDEO_HOST = /(?:^|\.)(?:youtube(?:-nocookie)?|youtu|vimeo|dailymotion|wistia|twitch|loom|tiktok|vidyard|brightcove)\./i;

const isPixel = (img: HTMLElement): boolean => img.getAttribute('width') === '1' && img.getAttribute('height') === '1';

export function images(page: Page): string[] {
  const found = new OrderedSet();
  for (const el of page.root.querySelectorAll('img, picture source, input[type="image" i]')) {
    if (el.rawTagName === 'source') {
      found.add(absolute(page, largestSrcset(el.getAttribute('srcset'))));
    } else if (!isPixel(el)) found.add(absolute(page, imageSource(el)));
  }
  return found.values;
}

/** `<audio>`/`<video>` sources plus links to files of that kind. */
function mediaUrls(page: Page, tag: 'audio' | 'video', file: RegExp): OrderedSet {
  const found = new OrderedSet();
  for (const el of page.root.querySelectorAll(`${tag}[src], ${tag} source[src]`)) found.add(absolute(page, el.getAttribute('src')));
  for (const a of page.root.querySelectorAll('a[href]')) {
    const url = absolute(page, a.getAttribute('href'));
    if (url && file.test(new URL(url).pathname)) found.add(url);
  }
  return found;
}

export const audios = (page: Page): string[] => mediaUrls(page, 'audio', AUDIO_FILE).values;

export function videos(page: Page): string[] {
  const found = mediaUrls(page, 'video', VIDEO_FILE);
  for (const frame of page.root.querySelectorAll('iframe[src], iframe[data-src]')) {
    const url = absolute(page, frame.getAttribute('src') ?? frame.getAttribute('data-src'));
    if (url && VIDEO_HOST.test(new URL(url).hostname)) found.add(url);
  }
  return found.values;
}

/** The page's icon: a declared `icon`, else an Apple touch icon, else `/favicon.ico` at the site root. */
export function favicon(page: Page): string {
  const links = (page.head ?? page.root).querySelectorAll('link[rel][href]');
  const rels = (link: HTMLElement): string[] => (link.getAttribute('rel') ?? '').toLowerCase().split(/\s+/);
  const declared =
    links.find((link) => rels(link).includes('icon')) ??
    links.find((link) => rels(link).some((rel) => rel === 'apple-touch-icon' || rel === 'apple-touch-icon-precomposed'));
  const url = page.resolve(declared?.getAttribute('href'));
  return url ?? page.resolve('/favicon.ico') ?? '';
}

function absolute(page: Page, value: string | undefined): string | undefined {
  const url = page.resolve(value);
  return isWebUrl(url) ? url : undefined;
}
