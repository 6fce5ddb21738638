use seam_cli::providers::LocalFactory;
use seam_conformance::{SequenceConfig, run_sequences};

#[test]
#[ignore]
fn flaky() {
    let config = SequenceConfig {
        seed: 5,
        ..SequenceConfig::default()
    };
    let out = run_sequences(&LocalFactory, &config, &mut |_| {}).expect("runs");
    if let Some(f) = out.failure {
        println!("{:?}", f.failure);
        println!("steps {} original {}", f.steps.len(), f.original_len);
        for s in &f.steps {
            println!("  {}", seam_conformance::describe(s));
        }
    }
}
