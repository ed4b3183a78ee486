# A cache in front of the origin that teams can run as their CDN: Debian's varnish and
# varnish-modules (xkey). It honours the origin's s-maxage, stale-while-revalidate and
# stale-if-error; keys a page by the cookies its route declares, normalized, and nothing else of
# the visitor's cookies; passes private answers; tags each page with its cache groups and path; and
# answers the origin's CDN_PURGE_URL calls by tag, soft and hard. The backend below is the one thing
# to edit. Run: varnishd -a :6081 -f /etc/varnish/default.vcl -s malloc,256m, with the origin's
# CACHE_GROUP_ALIASES=xkey, CDN_PURGE_URL=http://<varnish>:6081/.origin/purge/{mode}/{groups},
# CDN_PURGE_METHOD=PURGE (docs/render-cache-and-cdn.md, docs/revalidation.md).
vcl 4.1;

import cookie;
import std;
import xkey;

# The one setting: where the origin listens (its Kubernetes Service, a host, a load balancer).
backend origin {
    .host = "127.0.0.1";
    .port = "4000";
    # Healthy while /readyz answers 200: stale-if-error serves stale pages only while it does not.
    .probe = {
        .url = "/readyz";
        .interval = 1s;
        .timeout = 1s;
        .window = 3;
        .threshold = 2;
    }
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
    if (req.method == "PURGE") {
        call origin_purge;
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
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
}

sub vcl_synth {
    # The fetch in place of a stale page failed: once more, where vcl_hit answers with that page.
    if (req.http.X-Origin-Fetch && !req.http.X-Origin-Stale-OK) {
        unset req.http.X-Origin-Fetch;
        set req.http.X-Origin-Stale-OK = "1";
        return (restart);
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
