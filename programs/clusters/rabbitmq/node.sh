#!/bin/sh
# One RabbitMQ broker of the three-node cluster in ../rabbitmq.toml, at address $1, in the
# node's working folder: its Erlang cookie, its config (the three brokers by classic peer
# discovery, autoheal after a partition), its database and logs (to standard output).
mkdir -p mnesia log && echo weftcookie > .erlang.cookie && chmod 400 .erlang.cookie
cat > rabbitmq.conf <<CONF
listeners.tcp.default = $1:5672
loopback_users = none
cluster_formation.peer_discovery_backend = classic_config
cluster_formation.classic_config.nodes.1 = rabbit@127.1.0.1
cluster_formation.classic_config.nodes.2 = rabbit@127.1.0.2
cluster_formation.classic_config.nodes.3 = rabbit@127.1.0.3
cluster_partition_handling = autoheal
CONF
echo '[].' > enabled_plugins
# No scheduler busy-waiting: a BEAM scheduler with nothing to do spins in real time before it
# sleeps, and under weft that spinning only costs wall time (a run took 9 minutes with it, 2.4
# without; the same events).
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="+sbwt none +sbwtdcpu none +sbwtdio none"
export HOME=$PWD RABBITMQ_NODENAME=rabbit@$1 RABBITMQ_USE_LONGNAME=true
export RABBITMQ_MNESIA_BASE=$PWD/mnesia RABBITMQ_LOG_BASE=$PWD/log RABBITMQ_LOGS=-
export RABBITMQ_CONFIG_FILE=$PWD/rabbitmq.conf RABBITMQ_ENABLED_PLUGINS_FILE=$PWD/enabled_plugins
exec /usr/lib/rabbitmq/bin/rabbitmq-server
