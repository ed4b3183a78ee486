# A cache in front of the origin that teams can run as their CDN: Debian's varnish and
# varnish-modules (xkey). It honours the origin's s-maxage, stale-while-revalidate and
# stale-if-error; keys a page by the cookies its route declares, normalized, and nothing else of
# the visitor's cookies; passes private answers; tags each page with its cache groups and path; and
# answers the origin's CDN_PURGE_URL calls by tag, soft and hard. The backends below, and their list
# in vcl_init, are the one thing to edit: one per replica of the origin, or a single one for a load
# balancer or Kubernetes Service in front of them. A rolling deploy behind it drops no request: a
# stopping origin says so on /readyz before it stops accepting (DRAIN_WINDOW_MS), the probe takes
# it out, and a GET or HEAD refused anyway is fetched again from another replica
# (docs/scaling-and-deploying.md#behind-varnish).
# Run: varnishd -a :6081 -f /etc/varnish/default.vcl -s malloc,256m, with the origin's
# CACHE_GROUP_ALIASES=xkey, CDN_PURGE_URL=http://<varnish>:6081/.origin/purge/{mode}/{groups},
# CDN_PURGE_METHOD=PURGE (docs/render-cache-and-cdn.md, docs/revalidation.md), and TRUST_PROXY=true:
# the origin then answers a page with personal parts as an ESI template, which Varnish keeps once
# and fills with each visitor's parts (docs/scaling-and-deploying.md#personal-parts-through-varnish).
# This VCL overwrites what TRUST_PROXY makes the origin believe (vcl_recv).
vcl 4.1;

import cookie;
import directors;
import std;
import xkey;

# Healthy while /readyz answers 200: the director sends fetches to healthy replicas only, and
# stale-if-error serves stale pages only while the origin is sick. On SIGTERM an origin answers 503
# there at once, then serves on for its drain window (DRAIN_WINDOW_MS, 3 s by default) before it
# stops accepting. This probe marks it sick after (.window - .threshold + 1) = 2 failed probes: within
# 2 x .interval = 1 s of the change. Keep (.window - .threshold + 1) x .interval + .timeout (here 2 s)
# within DRAIN_WINDOW_MS when you change either, or fetches reach an origin that no longer accepts.
probe origin_ready {
    .url = "/readyz";
    .interval = 500ms;
    .timeout = 1s;
    .window = 3;
    .threshold = 2;
}

# Where the origin listens: one backend per replica (a host or pod IP and its PORT), each added to
# the director in vcl_init. Behind one address that balances (a Kubernetes Service, a load
# balancer), list that address alone: a retry's new connection is balanced again.
backend origin_1 {
    .host = "127.0.0.1";
    .port = "4000";
    .probe = origin_ready;
}
# backend origin_2 {
#     .host = "10.0.0.12";
#     .port = "4000";
#     .probe = origin_ready;
# }

# The replicas, sharded by URL (vcl_backend_fetch, at the end): each page is fetched from one
# replica, so each replica's in-memory render cache holds its share of the pages rather than all of
# them. A sick replica's share goes to the next healthy one on the ring, and comes back with it.
sub vcl_init {
    new origins = directors.shard();
    origins.add_backend(origin_1);
    # origins.add_backend(origin_2);
    origins.reconfigure();
}

# Who may purge: the origin's own processes, which call CDN_PURGE_URL from inside the network.
acl purgers {
    "127.0.0.1";
    "::1";
    "10.0.0.0"/8;
    "172.16.0.0"/12;
    "192.168.0.0"/16;
}

# The cookies and headers the app's routes declare (renderInputs() in app.routes.server.ts), and
# their closed sets: generated from the build by `npm run varnish:inputs`, never edited by hand.
include "./inputs.vcl";

sub vcl_recv {
    # What the origin believes from Varnish alone (it runs with TRUST_PROXY=true): a client's
    # Surrogate-Capability would get it a template with the parts left out (this VCL says it for
    # every fetch: vcl_backend_fetch), and a client's X-Forwarded-Host or -Proto would make the
    # origin render a page for another host or scheme than the one this cache keys it by (Host). A
    # TLS terminator in front that sets X-Forwarded-Proto: keep it here and add it to the hash.
    unset req.http.Surrogate-Capability;
    unset req.http.X-Forwarded-Host;
    unset req.http.X-Forwarded-Proto;
    if (req.method == "PURGE") {
        call origin_purge;
    }
    # Whether the visitor sent cookies, for vcl_deliver: origin_key_inputs may give a request that
    # sent none the declared cookies' defaults.
    if (req.esi_level == 0 && req.restarts == 0) {
        unset req.http.X-Origin-Cookies;
        if (req.http.Cookie) {
            set req.http.X-Origin-Cookies = "1";
        }
    }
    if (req.url ~ "^/_origin/part/") {
        call origin_part;
    }
    # The origin's templates include its part URLs and nothing else (it escapes any other ESI
    # markup a page holds): an include of anything else is no part of a page, and fetches nothing.
    if (req.esi_level > 0) {
        return (synth(204));
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # Whether any replica is healthy, for vcl_hit (the director itself: one backend's health would
    # say nothing of the others); the replica a fetch goes to is chosen in vcl_backend_fetch.
    set req.backend_hint = origins.backend(resolve=LAZY);
    if (req.http.X-Origin-Fetch) {
        # Back from vcl_hit: its object is past stale-while-revalidate, fetch a new one.
        set req.grace = 0s;
    }
    if (req.restarts == 0) {
        call origin_key_inputs;
    }
    # With Authorization too: s-maxage lets a shared cache store the answer (RFC 9111 §3.5), and
    # the origin never lets credentials into a shared page.
    return (hash);
}

# A personal part (/_origin/part/<build>/<n><page>), included into a page's template by ESI, or
# asked for directly: the visitor's own (private) when the request carries the part's cookies, else
# its placeholder. Never stored, whatever its headers say: Varnish's built-in VCL stores an answer
# that carries Surrogate-Control whatever its Cache-Control says, and this one is the visitor's.
# An include gets the request as the visitor sent it, cookies and all (Varnish copies the top
# request's headers from before vcl_recv, so origin_key_inputs never touched them), but for its
# Accept-Encoding: gzip when the page is stored gzipped, else none, whatever the visitor takes.
sub origin_part {
    return (pass);
}

# The cache keys a page by the cookies its route declares, normalized to their closed sets, and by
# nothing else of the visitor's cookies: every visitor shares one page per combination. The origin
# gets the visitor's own cookies (a private page needs them), the normalized ones first: it takes a
# cookie's first value, so the page it renders is the one the key names, whatever a visitor repeats.
sub origin_key_inputs {
    cookie.parse(req.http.Cookie);
    call origin_normalize_inputs;
    set req.http.X-Origin-Inputs = cookie.get_string();
    if (req.http.X-Origin-Inputs == "") {
        # Nothing declared: the visitor's own cookies go as they came.
    } else if (req.http.Cookie) {
        set req.http.Cookie = req.http.X-Origin-Inputs + "; " + req.http.Cookie;
    } else {
        set req.http.Cookie = req.http.X-Origin-Inputs;
    }
}

sub vcl_hit {
    if (obj.ttl >= 0s) {
        return (deliver);
    }
    # Stale within stale-while-revalidate: served while one background fetch refreshes it.
    if (obj.ttl + std.duration(obj.http.X-Origin-SWR, 0s) > 0s) {
        return (deliver);
    }
    # Within stale-if-error (the rest of its grace): only while the origin fails, sick or after a
    # failed fetch; else a fetch, once (vcl_recv), which may still fall back to this page.
    if (!std.healthy(req.backend_hint) || req.http.X-Origin-Stale-OK) {
        return (deliver);
    }
    set req.http.X-Origin-Fetch = "1";
    return (restart);
}

sub vcl_backend_response {
    # A failed refresh keeps the stale page (stale-if-error): a background one is dropped, a
    # foreground one in place of a stale page answers with that page (vcl_synth, vcl_hit).
    if (beresp.status >= 500 && (bereq.is_bgfetch || bereq.http.X-Origin-Fetch)) {
        return (abandon);
    }
    # A page with personal parts, as the template the origin sends a surrogate that assembles ESI:
    # kept once for every visitor, each delivery assembled with the visitor's parts, fetched (passed)
    # one after another. Its Surrogate-Control stays on the object (a 304 on refresh keeps the
    # stored headers, and with them this decision) and never reaches a client (vcl_deliver).
    if (beresp.http.Surrogate-Control ~ {"(^|[\s,])content="ESI/1\.0""}) {
        set beresp.do_esi = true;
    }
    # Varnish reads s-maxage and stale-while-revalidate (grace) itself; the object keeps its
    # stale-while-revalidate for vcl_hit, and its grace covers stale-if-error too. (A directive
    # that is absent leaves the header as it is: no duration, so 0s.)
    set beresp.http.X-Origin-SWR = regsub(beresp.http.Cache-Control,
        "^(?:.*[ ,])?stale-while-revalidate=(\d+).*$", "\1s");
    set beresp.grace = std.duration(beresp.http.X-Origin-SWR, 0s) + std.duration(
        regsub(beresp.http.Cache-Control, "^(?:.*[ ,])?stale-if-error=(\d+).*$", "\1s"), 0s);
    # A page that varies by Cookie varies, here, by the normalized declared cookies alone (which
    # is what the origin rendered it from); the visitor still gets the origin's Vary (vcl_deliver).
    if (beresp.http.Vary ~ "(?i)(^|,)\s*cookie\s*(,|$)") {
        set beresp.http.X-Origin-Vary = beresp.http.Vary;
        set beresp.http.Vary = regsuball(beresp.http.Vary, "(?i)(^|,)(\s*)cookie(\s*)(,|$)", "\1\2X-Origin-Inputs\3\4");
    }
    # Its tags, as the origin spells them in its xkey header (CACHE_GROUP_ALIASES=xkey): each cache
    # group and the page's path, percent-encoded as its purge URLs carry them. The vmod reads that
    # header itself; vcl_deliver keeps it from visitors.
    #
    # An answer the origin sends stale (an Age past its s-maxage: revalidated on demand, or standing
    # in for a failed render) is kept stale within its grace, and refetched at the next request; the
    # built-in vcl_beresp_stale would make it a miss for every request of the next two minutes.
    if (beresp.ttl <= 0s && beresp.grace > 0s && !beresp.http.Set-Cookie &&
        beresp.http.Cache-Control !~ "(?i)(no-store|no-cache|private)") {
        return (deliver);
    }
}

# Every fetch asks the origin for a page it may store as fresh: a stale one (revalidated on demand)
# would come back with its Age past s-maxage. The origin waits for the refresh a stale page starts
# anyway instead (RFC 9111's max-stale request directive), so this costs it no render of its own.
sub vcl_backend_fetch {
    set bereq.http.Cache-Control = "max-stale=0";
    # Varnish assembles ESI: the origin answers a page with personal parts as a template (vcl_recv
    # keeps a client from saying so).
    set bereq.http.Surrogate-Capability = {"varnish="ESI/1.0""};
}

sub vcl_deliver {
    # Whether this answer came from the cache: `hit` (fresh or stale) or `miss`.
    if (obj.hits > 0) {
        set resp.http.X-Cache = "hit";
    } else {
        set resp.http.X-Cache = "miss";
    }
    if (resp.http.X-Origin-Vary) {
        set resp.http.Vary = resp.http.X-Origin-Vary;
        unset resp.http.X-Origin-Vary;
    }
    unset resp.http.X-Origin-SWR;
    unset resp.http.xkey;
    unset resp.http.Surrogate-Control;
    # A page assembled from a template: its validators are the template's, and its parts change
    # without it, so no ETag or Last-Modified (nor a 304 Varnish would answer from them). Its parts
    # are the visitor's own when the request carries their cookies; Varnish sends the page's headers
    # before it fetches any part, so it cannot know which parts answered privately, and any cookie
    # makes the page private. Without cookies every part is its placeholder, shared as the page is:
    # the template's Cache-Control stands (a visitor who signs in later gets placeholders from a copy
    # kept meanwhile, which the browser fills, never another visitor's part).
    if (req.esi_level == 0 && obj.can_esi) {
        unset resp.http.ETag;
        unset resp.http.Last-Modified;
        if (req.http.X-Origin-Cookies) {
            set resp.http.Cache-Control = "private, no-cache";
        }
    }
}

sub vcl_synth {
    # The fetch in place of a stale page failed: once more, where vcl_hit answers with that page.
    if (req.http.X-Origin-Fetch && !req.http.X-Origin-Stale-OK) {
        unset req.http.X-Origin-Fetch;
        set req.http.X-Origin-Stale-OK = "1";
        return (restart);
    }
}

# A fetch that failed before any answer came (connection refused or reset, no backend, no first
# byte in time): a GET or HEAD, which the origin may be asked again, is fetched again from the next
# healthy replica (vcl_backend_fetch picks by bereq.retries), at most twice. That covers a replica
# that stopped before the probe saw it (a crash, an OOM kill, a deploy without a drain window). A
# POST is never sent twice. An answer cut short after its headers cannot be retried: its client
# gets what had come, then the connection closes.
sub vcl_backend_error {
    if ((bereq.method == "GET" || bereq.method == "HEAD") && bereq.retries < 2) {
        return (retry);
    }
}

# CDN_PURGE_URL=http://<varnish>/.origin/purge/{mode}/{groups}, CDN_PURGE_METHOD=PURGE: a call
# names one tag or a comma-separated list of them (a batch), as the origin's xkey header spells them.
sub origin_purge {
    if (client.ip !~ purgers) {
        return (synth(403, "Forbidden"));
    }
    if (req.url ~ "^/\.origin/purge/soft/[^/]+$") {
        set req.http.X-Purged = xkey.softpurge(regsub(req.url, "^/\.origin/purge/soft/", ""));
    } else if (req.url ~ "^/\.origin/purge/hard/[^/]+$") {
        set req.http.X-Purged = xkey.purge(regsub(req.url, "^/\.origin/purge/hard/", ""));
    } else {
        return (synth(400, "Purge /.origin/purge/soft/TAGS or /.origin/purge/hard/TAGS"));
    }
    return (synth(200, "Purged " + req.http.X-Purged));
}

# The replica for this fetch: the URL's own on the ring, or on a retry the next healthy one (alt:
# the retries so far), resolved again at each retry. A part's URL goes where its page's does: that
# replica holds the page, and with it the part's place and placeholder, in its render cache (the
# key of any other URL is what by=URL would hash). Only this here, last: Varnish runs every
# vcl_backend_fetch in the file in order, so one above must not return, or this never runs.
sub vcl_backend_fetch {
    set bereq.backend = origins.backend(by=KEY,
        key=origins.key(regsub(bereq.url, "^/_origin/part/[^/]+/[0-9]+/", "/")),
        alt=bereq.retries, healthy=ALL);
}
