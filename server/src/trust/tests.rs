//! The trust rules against a Store with fake processes: provenance recorded, agent driving
//! only where a person turned it on, decisions answered only for a person.
