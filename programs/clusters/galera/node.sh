#!/bin/sh
# One MariaDB Galera node of the three in ../galera.toml: node $1 at address $2, serving SQL
# on port $3, in the node's working folder. Node 0 makes the cluster (its database made by
# mariadb-install-db); nodes 1 and 2 join 6 s and 9 s later, each copying the database from a
# donor by rsync (the default state transfer: the joiner runs an rsync daemon and waits, with
# `ss`, until it listens; the donor's script pushes the files to it). The server runs as the
# mysql user, as Debian's service does (an rsync daemon started by root would switch to
# `nobody`, who may not enter the data directory); its error log goes to standard error, so
# the run's output shows the state transfers.
id=$1; ip=$2; port=$3
# After a crash the node restarts here: its database is kept (made whole or not at all, so a
# crash during mariadb-install-db leaves nothing half made), and node 0 makes a new cluster
# only the first time; after that it rejoins the others like any node.
new=""
if [ ! -d data ]; then
  rm -rf data.new
  mariadb-install-db --no-defaults --datadir=$PWD/data.new --user=mysql --skip-test-db \
    > install.log 2>&1 || { cat install.log; exit 9; }
  mv data.new data
  [ "$id" = 0 ] && new="--wsrep-new-cluster"
fi
[ "$id" = 0 ] || sleep $((3 + id * 3))
# The server's socket and pid file are made here, as the mysql user.
chmod 777 .
exec mariadbd --no-defaults --datadir=$PWD/data --socket=$PWD/sock --port=$port \
  --bind-address=$ip --user=mysql --innodb-use-native-aio=0 --skip-grant-tables \
  --wsrep-on=ON --wsrep-provider=/usr/lib/galera/libgalera_smm.so \
  --wsrep-cluster-address=gcomm://127.1.0.1,127.1.0.2,127.1.0.3 --wsrep-node-address=$ip \
  --wsrep-provider-options=gmcast.listen_addr=tcp://$ip:4567 --wsrep-sst-method=rsync \
  --binlog-format=ROW --innodb-autoinc-lock-mode=2 $new
