#!/usr/bin/env bash
# Make sure a PostgreSQL server is running on 127.0.0.1 and print a URL for the tests.
# As root: Debian's cluster (installed with apt-get when missing) started with pg_ctlcluster.
# As another user: a throwaway cluster made with initdb in a temp folder.
# Prints SUPPORTDESK_TEST_PG_URL's value on stdout; progress goes to stderr.
set -euo pipefail
ROLE=supportdesk_test
PASS=supportdesk_test
PORT=${SUPPORTDESK_TEST_PG_PORT:-5432}

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

if [ "$(id -u)" = 0 ]; then
    if [ -z "$(find_bin)" ] || ! command -v pg_ctlcluster >/dev/null 2>&1; then
        echo "installing Debian's postgresql package" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
    fi
    version=$(basename "$(dirname "$(find_bin)")")
    if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
        pg_createcluster "$version" main >&2
    fi
    pg_ctlcluster "$version" main start >&2 2>&1 || true
    port=$(pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $3}')
    for _ in $(seq 1 50); do
        su postgres -c "psql -p $port -Atqc 'select 1'" >/dev/null 2>&1 && break
        sleep 0.2
    done
    su postgres -c "psql -p $port -v ON_ERROR_STOP=1 -qc \"DO \\\$\\\$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE') THEN
            CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASS';
        END IF; END \\\$\\\$;\"" >&2
    echo "postgresql://$ROLE:$PASS@127.0.0.1:$port/postgres"
else
    bin=$(find_bin)
    [ -n "$bin" ] || { echo "no PostgreSQL binaries found; install Debian's postgresql package" >&2; exit 1; }
    dir=$(mktemp -d /tmp/supportdesk-pg.XXXXXX)
    printf '%s\n' "$PASS" > "$dir/pw"
    "$bin/initdb" -D "$dir/data" -U "$ROLE" --pwfile="$dir/pw" -A scram-sha-256 >/dev/null
    "$bin/pg_ctl" -D "$dir/data" -o "-p $PORT -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" -w start >&2
    echo "postgresql://$ROLE:$PASS@127.0.0.1:$PORT/postgres"
fi
