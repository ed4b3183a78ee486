# A cache in front of the origin that teams can run as their CDN: Debian's varnish and
# varnish-modules (xkey). It honours the origin's s-maxage, stale-while-revalidate and
# stale-if-error; keys a page by the cookies its route declares, normalized, and nothing else of
# the visitor's cookies; passes private answers; tags each page with its Cache-Groups; and answers
# the origin's CDN_PURGE_URL calls by group, soft and hard. The backend below is the one thing to
# edit. Run: varnishd -a :6081 -f /etc/varnish/default.vcl -s malloc,256m (docs/render-cache-and-cdn.md).
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
    if (req.http.Cookie) {
        set req.http.Cookie = req.http.X-Origin-Inputs + "; " + req.http.Cookie;
    } else if (req.http.X-Origin-Inputs != "") {
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
    # Its cache groups (RFC 9875) as xkey tags: from Cache-Groups, a List of Strings.
    if (beresp.http.Cache-Groups) {
        set beresp.http.xkey = regsuball(beresp.http.Cache-Groups, {"\s*"([^"]*)"\s*,?"}, "\1 ");
    }
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

# CDN_PURGE_URL=http://<varnish>/.origin/purge/{mode}/{group}, CDN_PURGE_METHOD=PURGE.
sub origin_purge {
    if (client.ip !~ purgers) {
        return (synth(403, "Forbidden"));
    }
    if (req.url ~ "^/\.origin/purge/soft/[^/]+$") {
        set req.http.X-Purged = xkey.softpurge(regsub(req.url, "^/\.origin/purge/soft/", ""));
    } else if (req.url ~ "^/\.origin/purge/hard/[^/]+$") {
        set req.http.X-Purged = xkey.purge(regsub(req.url, "^/\.origin/purge/hard/", ""));
    } else {
        return (synth(400, "Purge /.origin/purge/soft/GROUP or /.origin/purge/hard/GROUP"));
    }
    return (synth(200, "Purged " + req.http.X-Purged));
}
