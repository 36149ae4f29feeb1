#!/bin/sh
# Starts one Redis Sentinel (k8s/components/redis-ha): writes its config into its own writable
# CONF_DIR (/data; Sentinel rewrites the file as it learns) and runs redis-server --sentinel.
#
# It monitors the master the other sentinels already follow, or on the first start of the set
# pod 0 of the Redis StatefulSet by its DNS name (FIRST_MASTER; resolved by Sentinel itself,
# resolve-hostnames; its answers stay IP literals, announce-hostnames is off). Quorum 2 of 3.
# tests/k8s/redis_ha.sh runs this script on loopback (SENTINEL_PORT, SENTINELS, FIRST_MASTER,
# CONF_DIR and HOSTNAME set by the test).
set -eu
: "${POD_IP:?}" "${MASTER_NAME:?}" "${DOWN_AFTER_MS:?}"
port=${SENTINEL_PORT:-26379}
dir=${CONF_DIR:-/data}
sentinels=${SENTINELS:-croupier-sentinel-0:26379 croupier-sentinel-1:26379 croupier-sentinel-2:26379}
first=${FIRST_MASTER:-croupier-redis-0.${REDIS_HEADLESS:?} 6379}
master=""
for s in $sentinels; do
    a=$(timeout 2 redis-cli -h "${s%:*}" -p "${s##*:}" --raw \
        sentinel get-master-addr-by-name "$MASTER_NAME" 2>/dev/null | tr '\n' ' ') || a=""
    case "$a" in
    *[0-9]*' '[0-9]*) master=${a% } && break ;;
    esac
done
[ -n "$master" ] || master=$first
echo "sentinel-start: $HOSTNAME monitors $master" >&2
cat >"$dir/sentinel.conf" <<CONF
port $port
sentinel resolve-hostnames yes
sentinel announce-hostnames no
sentinel announce-ip $POD_IP
sentinel monitor $MASTER_NAME $master 2
sentinel down-after-milliseconds $MASTER_NAME $DOWN_AFTER_MS
sentinel failover-timeout $MASTER_NAME 10000
sentinel parallel-syncs $MASTER_NAME 1
CONF
exec redis-server "$dir/sentinel.conf" --sentinel
