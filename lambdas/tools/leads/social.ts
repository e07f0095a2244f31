/**
 * Social-network profiles (step 4 of index.ts's module comment): which URLs are a profile on a reported network,
 * and its normalised URL and handle; share, intent, post and tracking URLs are not.
 */
import { percentDecode } from './text.ts';
import type { SocialNetwork } from './types.ts';

const X_RESERVED = new Set(['share', 'intent', 'home', 'search', 'hashtag', 'i', 'login', 'signup', 'settings', 'explore', 'messages', 'notifications', 'tos', 'privacy', 'about', 'compose', 'widgets', 'account', 'download', 'oauth', 'statuses', 'status', 'following', 'followers', 'who_to_follow', 'lists', 'jobs', 'en', 'logout', 'rules']);
const FACEBOOK_RESERVED = new Set([
  'sharer', 'sharer.php', 'share.php', 'share', 'dialog', 'plugins', 'tr', 'connect', 'login', 'login.php', 'help', 'about', 'business', 'policies',
  'policy.php', 'privacy', 'legal', 'events', 'groups', 'watch', 'photo.php', 'photo', 'photos', 'story.php', 'permalink.php', 'hashtag', 'home.php',
  '2008', 'ads', 'settings', 'marketplace', 'gaming', 'notes', 'media', 'video.php', 'videos', 'l.php', 'app_scoped_user_id', 'apps', 'developers', 'terms',
  'terms.php', 'careers', 'search', 'friends', 'messages', 'reel', 'reels', 'stories', 'fundraisers', 'offsite_event', 'recover', 'r.php', 'campaign',
  'v2.0', 'v3.0', 'pg', 'fbml', 'bookmarks', 'lite', 'watchparty',
]);
const INSTAGRAM_RESERVED = new Set(['p', 'reel', 'reels', 'explore', 'stories', 'accounts', 'tv', 'direct', 'about', 'developer', 'legal', 'web', 'embed.js', 'share']);
const YOUTUBE_RESERVED = new Set([
  'watch', 'embed', 'results', 'playlist', 'shorts', 'feed', 'redirect', 't', 'about', 'account', 'premium', 'kids', 's', 'live', 'hashtag', 'gaming',
  'music', 'yt', 'iframe_api', 'subscription_center', 'attribution_link', 'howyoutubeworks', 'creators', 'ads', 'player_api', 'v', 'post', 'signin',
  'logout', 'upload', 'channel_switcher', 'oembed', 'get_video_info', 'api', 'sw.js', 'new', 'trending', 'favicon.ico',
]);
const GITHUB_RESERVED = new Set([
  'features', 'about', 'pricing', 'login', 'join', 'topics', 'marketplace', 'explore', 'settings', 'site', 'security', 'enterprise', 'apps', 'collections',
  'trending', 'events', 'notifications', 'contact', 'customer-stories', 'readme', 'team', 'new', 'search', 'sponsors', 'solutions', 'resources',
  'signup', 'logout', 'codespaces', 'copilot', 'issues', 'pulls', 'discussions', 'orgs', 'users', 'blog', 'git-guides', 'mobile', 'premium-support',
]);
const PINTEREST_RESERVED = new Set(['pin', 'search', 'ideas', 'today', 'business', '_', 'explore', 'categories', 'topics', 'discover', 'login', 'about', 'settings', 'resource', 'sitemaps', 'v3', 'oauth', 'pinit.js', 'pinit']);
const TELEGRAM_RESERVED = new Set(['share', 'joinchat', 'addstickers', 'addemoji', 'proxy', 'socks', 'iv', 'login', 'c', 'setlanguage', 'addtheme', 'bg', 'invoice']);
/** Fediverse servers whose `/@user` URLs are Mastodon-style profiles (others count when linked with `rel="me"`). */
const MASTODON_HOSTS = /(?:^|\.)(?:mastodon\.[a-z.]+|mstdn\.[a-z.]+|mas\.to|fosstodon\.org|hachyderm\.io|infosec\.exchange|techhub\.social|social\.vivaldi\.net|mastodon\.social|chaos\.social|toot\.community|universeodon\.com|ioc\.exchange|sigmoid\.social|det\.social|troet\.cafe|norden\.social)$/;
/** Sites with `/@user` paths that are not Mastodon servers. */
const NOT_MASTODON = /(?:^|\.)(?:medium\.com|tiktok\.com|threads\.net|threads\.com|youtube\.com|substack\.com|dev\.to|vimeo\.com|behance\.net|flickr\.com|soundcloud\.com|twitch\.tv|pixiv\.net|letterboxd\.com|linktr\.ee)$/;

/** The profile a URL points to, or null when it is not a profile of a reported network (a share, post or tracking URL, another site). */
export function socialProfile(href: string, relMe = false): { network: SocialNetwork; handle: string; url: string } | null {
  let u: URL;
  try {
    u = new URL(href.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  // www., mobile and country subdomains (uk.linkedin.com, es-es.facebook.com), not the name of a two-label host (wa.me).
  const base = host.split('.').length > 2 ? host.replace(/^(?:www\d?|m|mobile|touch|[a-z]{2}(?:-[a-z]{2})?)\./, '') : host;
  let path = u.pathname;
  // Old X links: twitter.com/#!/name
  if (u.hash.startsWith('#!/') || u.hash.startsWith('#%21/')) path = u.hash.replace(/^#(?:!|%21)/, '');
  const segs = path.split('/').filter(Boolean).map(percentDecode);
  const first = segs[0] ?? '';
  const lower = first.toLowerCase();
  const make = (network: SocialNetwork, handle: string, urlHost: string, urlPath: string) => ({ network, handle, url: `https://${urlHost}/${urlPath}` });

  if (base === 'linkedin.com') {
    if (segs.length >= 2 && ['in', 'company', 'school', 'showcase'].includes(lower) && /^[\p{L}\p{N}._%-]+$/u.test(segs[1]!)) {
      const handle = `${lower}/${segs[1]!}`;
      return make('linkedin', handle, 'linkedin.com', handle);
    }
    return null;
  }
  if (base === 'twitter.com' || base === 'x.com') {
    if (lower === 'intent' && ['follow', 'user'].includes((segs[1] ?? '').toLowerCase())) {
      const name = u.searchParams.get('screen_name');
      return name && /^[A-Za-z0-9_]{1,15}$/.test(name) ? make('x', name, base, name) : null;
    }
    if (segs.length !== 1) return null;
    const name = first.replace(/^@/, '');
    if (!/^[A-Za-z0-9_]{1,15}$/.test(name) || X_RESERVED.has(name.toLowerCase())) return null;
    return make('x', name, base, name);
  }
  if (base === 'facebook.com' || base === 'fb.com' || base === 'fb.me') {
    if (lower === 'profile.php') {
      const id = u.searchParams.get('id');
      return id && /^\d+$/.test(id) ? make('facebook', id, 'facebook.com', `profile.php?id=${id}`) : null;
    }
    if ((lower === 'pages' || lower === 'people') && segs.length >= 3 && /^\d+$/.test(segs[2]!)) {
      return make('facebook', segs[2]!, 'facebook.com', `${lower}/${segs[1]!}/${segs[2]!}`);
    }
    if (segs.length !== 1 || FACEBOOK_RESERVED.has(lower) || !/^[\p{L}\p{N}.-]{2,150}$/u.test(first) || /\.php$/i.test(first)) return null;
    return make('facebook', first, 'facebook.com', first);
  }
  if (base === 'instagram.com' || base === 'instagr.am') {
    if (segs.length !== 1 || INSTAGRAM_RESERVED.has(lower) || !/^[A-Za-z0-9._]{1,30}$/.test(first)) return null;
    return make('instagram', first, 'instagram.com', first);
  }
  if (base === 'youtube.com') {
    if (first.startsWith('@') && /^@[\p{L}\p{N}._-]{2,100}$/u.test(first)) return make('youtube', first, 'youtube.com', first);
    if (['channel', 'user', 'c'].includes(lower) && segs[1] && /^[\p{L}\p{N}._-]+$/u.test(segs[1])) {
      const handle = `${lower}/${segs[1]}`;
      return make('youtube', handle, 'youtube.com', handle);
    }
    if (segs.length === 1 && !YOUTUBE_RESERVED.has(lower) && /^[A-Za-z0-9_-]{2,100}$/.test(first) && !first.includes('.')) {
      return make('youtube', `c/${first}`, 'youtube.com', `c/${first}`);
    }
    return null;
  }
  if (base === 'github.com') {
    if (segs.length !== 1 || GITHUB_RESERVED.has(lower) || !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(first)) return null;
    return make('github', first, 'github.com', first);
  }
  if (base === 'tiktok.com') {
    if (segs.length !== 1 || !/^@[A-Za-z0-9._]{2,24}$/.test(first)) return null;
    return make('tiktok', first.slice(1), 'tiktok.com', first);
  }
  if (/^pinterest\.(?:com|co\.uk|ca|fr|de|es|it|at|ch|ie|nz|jp|pt|se|dk|cl|ph|com\.au|com\.mx)$/.test(base)) {
    if (!first || PINTEREST_RESERVED.has(lower) || !/^[A-Za-z0-9_]{3,30}$/.test(first)) return null;
    return make('pinterest', first, 'pinterest.com', first);
  }
  if (base === 'threads.net' || base === 'threads.com') {
    if (segs.length !== 1 || !/^@[A-Za-z0-9._]{1,30}$/.test(first)) return null;
    return make('threads', first.slice(1), base, first);
  }
  if (base === 'bsky.app') {
    if (segs.length !== 2 || lower !== 'profile' || !/^(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}$|^did:plc:[a-z0-9]+$/.test(segs[1]!)) return null;
    return make('bluesky', segs[1]!, 'bsky.app', `profile/${segs[1]!}`);
  }
  if (base === 't.me' || base === 'telegram.me') {
    if (lower === 's' && segs[1]) return /^[A-Za-z0-9_]{4,32}$/.test(segs[1]) ? make('telegram', segs[1], 't.me', segs[1]) : null;
    if (segs.length !== 1 || TELEGRAM_RESERVED.has(lower) || !/^[A-Za-z][A-Za-z0-9_]{3,31}$/.test(first)) return null;
    return make('telegram', first, 't.me', first);
  }
  if (base === 'wa.me') {
    if (segs.length !== 1 || !/^\+?\d{7,15}$/.test(first)) return null;
    const digits = first.replace(/^\+/, '');
    return make('whatsapp', digits, 'wa.me', digits);
  }
  if (base === 'whatsapp.com' && host.startsWith('api.') && lower === 'send') {
    const phone = (u.searchParams.get('phone') ?? '').replace(/\D/g, '');
    return phone.length >= 7 && phone.length <= 15 ? make('whatsapp', phone, 'wa.me', phone) : null;
  }
  // Mastodon-style: https://<server>/@user on a known server, or on any server when linked with rel="me".
  if (segs.length === 1 && /^@[A-Za-z0-9_]{1,30}$/.test(first) && !NOT_MASTODON.test(host) && (MASTODON_HOSTS.test(host) || relMe)) {
    const server = host.replace(/^www\./, '');
    return make('mastodon', `${first.slice(1)}@${server}`, server, first);
  }
  return null;
}
