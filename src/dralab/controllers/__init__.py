"""What kube-controller-manager does to a cluster snapshot before the scheduler sees it.

A layer between the cluster store (``dralab.cluster``) and the scheduler
(``dralab.scheduler``): the scheduler imports these modules, they never import the
scheduler.

* ``snapshotbuild``: ``build_cluster``, the ClusterState of a run from loaded API
  objects (duplicates as ``kubectl apply`` leaves them, ``applyorder``; generated
  names, ``generatednames``; workloads expanded into the pods they are missing).
* ``workloads``: the workload controllers (Job, CronJob, Deployment, ReplicaSet,
  StatefulSet, DaemonSet): what each would create on its next sync; ``owners`` (who
  owns what), ``workloadobjects`` (the objects they create, named as they name
  them) and ``cronschedule`` (a CronJob's next activation).
* ``resourceclaims``: the resourceclaim controller (claims from templates, released
  and deleted with their pods) and the claims a pod uses; ``podgroups`` (a pod's
  PodGroup and the group's shared claims).

The package imports none of its modules: import the module that holds a name.
"""
