# One ovsdb-server of a clustered (Raft) Open_vSwitch database. $1 = node id, $2 = its address,
# $3 = node 0's address. Node 0 creates the cluster, the others join it through node 0; Raft
# on port 6644, clients on 6641, everything in the node's working directory. A node restarted
# after a crash keeps its database file and rejoins with it.
id=$1; ip=$2; first=$3
schema=/usr/share/openvswitch/vswitch.ovsschema
if [ ! -e conf.db ]; then
  if [ "$id" = 0 ]; then
    ovsdb-tool create-cluster conf.db $schema tcp:$ip:6644 || exit 1
  else
    ovsdb-tool join-cluster conf.db Open_vSwitch tcp:$ip:6644 tcp:$first:6644 || exit 1
  fi
fi
ovsdb-server conf.db --remote=ptcp:6641:$ip --unixctl=$PWD/ovsdb.ctl \
  --pidfile=$PWD/ovsdb.pid --log-file=$PWD/ovsdb.log -vconsole:info -vfile:info &
sleep 12
ovs-appctl -t $PWD/ovsdb.ctl cluster/status Open_vSwitch | grep -E '^(Role|Term|Status):'
wait
