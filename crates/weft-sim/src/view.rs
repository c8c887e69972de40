//! What checks see of the in-process world: the [`View`] of one instant (nodes, messages in
//! flight, the history of [`Observation`]s), the [`Phase`], and the [`Property`] a target
//! declares over it.

use crate::node::{Node, NodeId};
use crate::world::{Ev, Queued, Slot};
use std::collections::BinaryHeap;
use weft_core::{Modality, SimTime};

/// One entry of the run's history.
#[derive(Clone, Debug)]
pub struct Observation<O> {
    pub time: SimTime,
    pub node: NodeId,
    pub obs: O,
}

/// Whether faults may still be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Fault,
    Heal,
}

/// What properties, assumptions and gates see: ground truth of the world at one instant.
pub struct View<'a, N: Node> {
    pub now: SimTime,
    pub phase: Phase,
    pub(crate) slots: &'a [Slot<N>],
    pub(crate) queue: &'a BinaryHeap<Queued<N>>,
    pub(crate) history: &'a [Observation<N::Obs>],
}

impl<'a, N: Node> View<'a, N> {
    pub fn len(&self) -> usize {
        self.slots.len()
    }
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
    /// The node's state, or None while it is crashed.
    pub fn node(&self, id: NodeId) -> Option<&'a N> {
        self.slots[id as usize].node.as_ref()
    }
    pub fn is_up(&self, id: NodeId) -> bool {
        self.slots[id as usize].node.is_some()
    }
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, Option<&'a N>)> + 'a {
        self.slots.iter().enumerate().map(|(i, s)| (i as NodeId, s.node.as_ref()))
    }
    /// Messages sent and not yet delivered or lost: `(from, to, msg)`, in no particular (but
    /// deterministic) order.
    pub fn in_flight(&self) -> impl Iterator<Item = (NodeId, NodeId, &'a N::Msg)> + 'a {
        self.queue.iter().filter_map(|q| match &q.ev {
            Ev::Deliver { from, to, msg, .. } => Some((*from, *to, msg)),
            _ => None,
        })
    }
    pub fn history(&self) -> &'a [Observation<N::Obs>] {
        self.history
    }
}

/// A named check over the world. `Err(detail)` means it does not hold.
pub struct Property<N: Node> {
    pub name: &'static str,
    pub modality: Modality,
    pub check: Check<N>,
}

/// A property's check: `Err(detail)` when it does not hold.
pub type Check<N> = fn(&View<'_, N>) -> Result<(), String>;
